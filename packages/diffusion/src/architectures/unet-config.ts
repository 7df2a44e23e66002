/** A transformer depth per down block, each once or per layer (`[1, [2, 0]]`). */
export type TransformerDepths = number | readonly (number | readonly number[])[];

/** UNet2DConditionModel config fields (docs/spec/diffusion.md §5.1); "per block" = one value or one per down block. */
export interface UNetConfig {
  sample_size: number;
  in_channels: number;
  out_channels: number;
  block_out_channels: number[];
  /** Resnets per down block (per block); an up block has one more. */
  layers_per_block: number | readonly number[];
  down_block_types: string[];
  up_block_types: string[];
  /** Missing: `UNetMidBlock2DCrossAttn`; null: no mid block; or `UNetMidBlock2D` (one resnet). */
  mid_block_type?: string | null;
  /** One width, or one per block (diffusers feeds every block the same context, so they must agree). */
  cross_attention_dim: number | readonly number[];
  /** Attention heads per block (diffusers' historical name; `num_attention_heads` wins when set). */
  attention_head_dim: number | readonly number[];
  num_attention_heads?: number | readonly number[] | null;
  use_linear_projection?: boolean;
  /** Attention scores in float32: what the float32 engines compute anyway. */
  upcast_attention?: boolean;
  /** The transformers' first attention attends to the context too (per block; the mid block never). */
  only_cross_attention?: boolean | readonly boolean[];
  norm_num_groups: number;
  norm_eps: number;
  flip_sin_to_cos?: boolean;
  freq_shift?: number;
  /** Transformer depth per down block, each once or per layer; mirrored on the up path unless reversed below. */
  transformer_layers_per_block?: TransformerDepths;
  /** The up blocks' depths (up block order, each once or per layer): needed when a down depth is per layer. */
  reverse_transformer_layers_per_block?: TransformerDepths | null;
  /** `text_time` (SDXL): an added embedding of the pooled text embeds and the micro-conditioning time ids. */
  addition_embed_type?: string | null;
  /** Sinusoidal width per time id (SDXL: 256). */
  addition_time_embed_dim?: number | null;
  /** Input width of the added embedding: pooled text embeds + 6 time ids × addition_time_embed_dim. */
  projection_class_embeddings_input_dim?: number | null;
  [key: string]: unknown;
}

/** Config keys that must keep their defaults: anything else is an architecture this engine lacks. */
const REQUIRED_DEFAULTS: Readonly<Record<string, unknown>> = {
  class_embed_type: null,
  num_class_embeds: null,
  addition_embed_type: null,
  encoder_hid_dim: null,
  encoder_hid_dim_type: null,
  time_cond_proj_dim: null,
  time_embedding_dim: null,
  time_embedding_act_fn: null,
  timestep_post_act: null,
  dual_cross_attention: false,
  attention_type: 'default',
  cross_attention_norm: null,
  resnet_skip_time_act: false,
  class_embeddings_concat: false,
  center_input_sample: false,
  resnet_time_scale_shift: 'default',
  time_embedding_type: 'positional',
  downsample_padding: 1,
  mid_block_scale_factor: 1,
  resnet_out_scale_factor: 1,
};

/** What a caller of the UNet can feed besides sample, timestep and context. */
export interface UNetConditioningSupport {
  /** Pooled text embeds and time ids (SDXL's `addition_embed_type: text_time`). */
  textTime?: boolean;
}

/** SDXL's added embedding is fed by a caller that supports it, else rejected like any unknown architecture. */
export const hasTextTimeEmbedding = (c: UNetConfig): boolean => c.addition_embed_type === 'text_time';

/**
 * The added embeddings diffusers 0.27 builds besides SDXL's `text_time`, each with what it would need here. None
 * belongs to a latent pipeline this package serves: the image ones need an image encoder or a prior's embeddings.
 */
const ADDED_EMBEDDINGS_NOT_BUILT: Readonly<Record<string, string>> = {
  text: "DeepFloyd IF's attention-pooled text embedding of a pixel-space UNet (encoder_hid_dim, no VAE)",
  text_image: "Kandinsky 2.1's: it needs CLIP image embeddings (image_embeds) from an image encoder or prior",
  image: "Kandinsky 2.2's: it needs CLIP image embeddings (image_embeds) from an image encoder or prior",
  image_hint: "Kandinsky 2.2 ControlNet's: it needs CLIP image embeddings and a hint image",
};

/** `file`: the config's name in messages (a ControlNet's encoder half is checked as a UNet too). */
export function validateUNetConfig(
  c: UNetConfig,
  support: UNetConditioningSupport = {},
  file = 'unet/config.json',
): void {
  const added = c.addition_embed_type;
  if (typeof added === 'string' && added in ADDED_EMBEDDINGS_NOT_BUILT)
    throw new Error(
      `${file}: addition_embed_type ${added} is not supported (${ADDED_EMBEDDINGS_NOT_BUILT[added]})`,
    );
  for (const [key, def] of Object.entries(REQUIRED_DEFAULTS)) {
    if (key === 'addition_embed_type' && support.textTime && hasTextTimeEmbedding(c)) {
      if (!c.addition_time_embed_dim || !c.projection_class_embeddings_input_dim)
        throw new Error(
          `${file}: addition_embed_type text_time needs addition_time_embed_dim and projection_class_embeddings_input_dim`,
        );
      continue;
    }
    const v = c[key];
    if (v !== undefined && v !== def) {
      throw new Error(
        `${file}: ${key} = ${JSON.stringify(v)} is not supported (only ${JSON.stringify(def)})`,
      );
    }
  }
  if ((c.conv_in_kernel ?? 3) !== 3 || (c.conv_out_kernel ?? 3) !== 3)
    throw new Error(`${file}: only 3×3 conv_in/conv_out kernels are supported`);
  // diffusers' get_activation maps both names to SiLU.
  if (c.act_fn !== undefined && c.act_fn !== 'silu' && c.act_fn !== 'swish')
    throw new Error(`${file}: act_fn = ${JSON.stringify(c.act_fn)} is not supported (only "silu")`);
  validateBlocks(c, file);
}

const DOWN_TYPES = new Set(['DownBlock2D', 'CrossAttnDownBlock2D']);
const UP_TYPES = new Set(['UpBlock2D', 'CrossAttnUpBlock2D']);

/** Integers in [min, max]: the loops a config asks for stay bounded (widths are checked against the weights). */
const isInt = (v: unknown, min: number, max = 64): boolean =>
  Number.isInteger(v) && (v as number) >= min && (v as number) <= max;

/** The per-block fields against the block types, one line naming the first thing this engine cannot build. */
function validateBlocks(c: UNetConfig, file: string): void {
  const fail = (what: string): never => {
    throw new Error(`${file}: ${what}`);
  };
  const N = c.block_out_channels.length;
  if (
    !Array.isArray(c.block_out_channels) ||
    N < 1 ||
    N > 8 ||
    !c.block_out_channels.every((ch) => isInt(ch, 1, Number.MAX_SAFE_INTEGER))
  )
    fail('block_out_channels needs 1 to 8 channel counts');
  if (
    !Array.isArray(c.down_block_types) ||
    !Array.isArray(c.up_block_types) ||
    c.down_block_types.length !== N ||
    c.up_block_types.length !== N
  )
    fail(`down_block_types and up_block_types need one entry per block_out_channels (${N})`);
  for (const t of c.down_block_types) if (!DOWN_TYPES.has(t)) fail(`down block type ${t} is not supported`);
  for (const t of c.up_block_types) if (!UP_TYPES.has(t)) fail(`up block type ${t} is not supported`);
  if (midBlockKind(c) === undefined) fail(`mid block type ${c.mid_block_type} is not supported`);
  const listOf = (key: string, v: unknown, ok: (x: unknown) => boolean): unknown[] => {
    const list = Array.isArray(v) ? v : Array(N).fill(v);
    if (list.length !== N || !list.every(ok))
      fail(`${key} = ${JSON.stringify(v)} needs one valid value or ${N}`);
    return list;
  };
  listOf('layers_per_block', c.layers_per_block, (x) => isInt(x, 1));
  const heads = listOf('attention_head_dim', c.num_attention_heads ?? c.attention_head_dim, (x) =>
    isInt(x, 1),
  );
  c.block_out_channels.forEach((ch, i) => {
    if (ch % c.norm_num_groups !== 0) fail(`block_out_channels ${ch} is not a multiple of norm_num_groups`);
    // diffusers then runs its transformers at heads·(ch // heads) features, a width this engine does not build.
    if (ch % (heads[i] as number) !== 0)
      fail(`attention heads ${heads[i]} do not divide block ${i}'s ${ch} channels`);
  });
  const widths = listOf('cross_attention_dim', c.cross_attention_dim, (x) =>
    isInt(x, 1, Number.MAX_SAFE_INTEGER),
  );
  if (new Set(widths).size > 1)
    fail('cross_attention_dim differs between blocks: every block reads the same encoder_hidden_states');
  listOf('only_cross_attention', c.only_cross_attention ?? false, (x) => typeof x === 'boolean');
  if (typeof (c.use_linear_projection ?? false) !== 'boolean')
    fail('use_linear_projection must be a boolean');
  if (typeof (c.upcast_attention ?? false) !== 'boolean') fail('upcast_attention must be a boolean');
  const depthOk = (x: unknown) => isInt(x, 0) || (Array.isArray(x) && x.every((d) => isInt(d, 0)));
  const downDepths = listOf('transformer_layers_per_block', c.transformer_layers_per_block ?? 1, depthOk);
  const reverse = c.reverse_transformer_layers_per_block;
  if (reverse === undefined || reverse === null) {
    // diffusers refuses this too: the up path's depths cannot be mirrored from per-layer down depths.
    if (downDepths.some(Array.isArray))
      fail('a per-layer transformer_layers_per_block needs reverse_transformer_layers_per_block');
  } else listOf('reverse_transformer_layers_per_block', reverse, depthOk);
  const layers = perBlock(c.layers_per_block, N);
  const upDepths = reverse ? perBlock(reverse, N) : [...downDepths].reverse();
  for (let i = 0; i < N; i++) {
    const down = downDepths[i];
    if (c.down_block_types[i] === 'CrossAttnDownBlock2D' && Array.isArray(down) && down.length < layers[i])
      fail(`transformer_layers_per_block[${i}] needs a depth for each of its ${layers[i]} layers`);
    const up = upDepths[i];
    const upLayers = layers[N - 1 - i] + 1;
    if (c.up_block_types[i] === 'CrossAttnUpBlock2D' && Array.isArray(up) && up.length < upLayers)
      fail(`reverse_transformer_layers_per_block[${i}] needs a depth for each of its ${upLayers} layers`);
  }
}

/** A config value given once or per down block, as a list of N. */
export const perBlock = <T>(v: T | readonly T[], n: number): T[] =>
  Array.isArray(v) ? [...(v as readonly T[])] : Array<T>(n).fill(v as T);

/** The mid block's kind: a missing key is diffusers' default, an explicit null is no mid block. */
export function midBlockKind(c: UNetConfig): 'none' | 'resnet' | 'cross' | undefined {
  const t = c.mid_block_type === undefined ? 'UNetMidBlock2DCrossAttn' : c.mid_block_type;
  if (t === null) return 'none';
  if (t === 'UNetMidBlock2D') return 'resnet';
  if (t === 'UNetMidBlock2DCrossAttn') return 'cross';
  return undefined;
}

/** The width of the context every block reads (`cross_attention_dim`, given once or per block). */
export const contextWidth = (c: UNetConfig): number =>
  Array.isArray(c.cross_attention_dim)
    ? (c.cross_attention_dim[0] as number)
    : (c.cross_attention_dim as number);
