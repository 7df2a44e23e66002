/** UNet2DConditionModel config fields (docs/spec/diffusion.md §5.1). */
export interface UNetConfig {
  sample_size: number;
  in_channels: number;
  out_channels: number;
  block_out_channels: number[];
  layers_per_block: number;
  down_block_types: string[];
  up_block_types: string[];
  mid_block_type?: string;
  cross_attention_dim: number;
  attention_head_dim: number | number[];
  num_attention_heads?: number | number[] | null;
  use_linear_projection?: boolean;
  norm_num_groups: number;
  norm_eps: number;
  flip_sin_to_cos?: boolean;
  freq_shift?: number;
  transformer_layers_per_block?: number | number[];
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
  only_cross_attention: false,
  dual_cross_attention: false,
  attention_type: 'default',
  cross_attention_norm: null,
  resnet_skip_time_act: false,
  class_embeddings_concat: false,
  mid_block_only_cross_attention: null,
  reverse_transformer_layers_per_block: null,
  center_input_sample: false,
  resnet_time_scale_shift: 'default',
  time_embedding_type: 'positional',
};

/** What a caller of the UNet can feed besides sample, timestep and context. */
export interface UNetConditioningSupport {
  /** Pooled text embeds and time ids (SDXL's `addition_embed_type: text_time`). */
  textTime?: boolean;
}

/** SDXL's added embedding is fed by a caller that supports it, else rejected like any unknown architecture. */
export const hasTextTimeEmbedding = (c: UNetConfig): boolean => c.addition_embed_type === 'text_time';

export function validateUNetConfig(c: UNetConfig, support: UNetConditioningSupport = {}): void {
  for (const [key, def] of Object.entries(REQUIRED_DEFAULTS)) {
    if (key === 'addition_embed_type' && support.textTime && hasTextTimeEmbedding(c)) {
      if (!c.addition_time_embed_dim || !c.projection_class_embeddings_input_dim)
        throw new Error(
          'unet/config.json: addition_embed_type text_time needs addition_time_embed_dim and projection_class_embeddings_input_dim',
        );
      continue;
    }
    const v = c[key];
    if (v !== undefined && v !== def) {
      throw new Error(
        `unet/config.json: ${key} = ${JSON.stringify(v)} is not supported (only ${JSON.stringify(def)})`,
      );
    }
  }
  if ((c.conv_in_kernel ?? 3) !== 3 || (c.conv_out_kernel ?? 3) !== 3)
    throw new Error('unet/config.json: only 3×3 conv_in/conv_out kernels are supported');
  for (const t of c.down_block_types)
    if (t !== 'DownBlock2D' && t !== 'CrossAttnDownBlock2D')
      throw new Error(`unet/config.json: down block type ${t} is not supported`);
  for (const t of c.up_block_types)
    if (t !== 'UpBlock2D' && t !== 'CrossAttnUpBlock2D')
      throw new Error(`unet/config.json: up block type ${t} is not supported`);
  if ((c.mid_block_type ?? 'UNetMidBlock2DCrossAttn') !== 'UNetMidBlock2DCrossAttn')
    throw new Error(`unet/config.json: mid block type ${c.mid_block_type} is not supported`);
}

const perBlock = (v: number | number[], n: number): number[] => (Array.isArray(v) ? v : Array(n).fill(v));

export interface UNetLayout {
  C: number[];
  heads: number[];
  layers: number[];
  temb: number;
}

/** Per-level channels, attention heads and transformer depth, and the time-embedding width. */
export function unetLayout(c: UNetConfig): UNetLayout {
  const N = c.block_out_channels.length;
  return {
    C: c.block_out_channels,
    heads: perBlock(c.num_attention_heads ?? c.attention_head_dim, N),
    layers: perBlock(c.transformer_layers_per_block ?? 1, N),
    temb: 4 * c.block_out_channels[0],
  };
}
