import { TIME_IDS, timeIdsEmbedding, timestepEmbedding } from './timestep-embedding.js';
import { type UNetConfig, validateUNetConfig } from './unet-config.js';

/**
 * diffusers `ControlNetModel` config fields (docs/spec/diffusion.md §5.1 for the fields it shares with the UNet):
 * the UNet's encoder half (no up blocks, `layers_per_block` once) plus the conditioning embedding.
 */
export interface ControlNetConfig extends Partial<UNetConfig> {
  down_block_types: string[];
  /** Channels of the conditioning image (3, RGB). */
  conditioning_channels?: number;
  /** `rgb` (default) or `bgr` (the image's channels flipped before the embedding). */
  controlnet_conditioning_channel_order?: string;
  /** Widths of the conditioning embedding's conv stack (default 16, 32, 96, 256: three ×2 downsamplings). */
  conditioning_embedding_out_channels?: readonly number[];
  /** Residuals averaged over the pixels (ControlNet "shuffle"); forces guess mode. */
  global_pool_conditions?: boolean;
}

const FILE = 'controlnet config.json';

/** The fields diffusers' `ControlNetModel.__init__` takes (0.27.2): what a written config keeps of a UNet's. */
export const CONTROLNET_CONFIG_KEYS: readonly string[] = [
  '_class_name',
  'in_channels',
  'conditioning_channels',
  'flip_sin_to_cos',
  'freq_shift',
  'down_block_types',
  'mid_block_type',
  'only_cross_attention',
  'block_out_channels',
  'layers_per_block',
  'downsample_padding',
  'mid_block_scale_factor',
  'act_fn',
  'norm_num_groups',
  'norm_eps',
  'cross_attention_dim',
  'transformer_layers_per_block',
  'encoder_hid_dim',
  'encoder_hid_dim_type',
  'attention_head_dim',
  'num_attention_heads',
  'use_linear_projection',
  'class_embed_type',
  'addition_embed_type',
  'addition_time_embed_dim',
  'num_class_embeds',
  'upcast_attention',
  'resnet_time_scale_shift',
  'projection_class_embeddings_input_dim',
  'controlnet_conditioning_channel_order',
  'conditioning_embedding_out_channels',
  'global_pool_conditions',
  'addition_embed_type_num_heads',
];

/** A UNet config's encoder fields and the given ControlNet fields, as a ControlNetModel config. */
export function controlNetConfigFrom(
  unet: Readonly<Record<string, unknown>>,
  fields: Partial<ControlNetConfig>,
): ControlNetConfig {
  const merged: Record<string, unknown> = { ...unet, ...fields, _class_name: 'ControlNetModel' };
  return Object.fromEntries(
    CONTROLNET_CONFIG_KEYS.filter((k) => merged[k] !== undefined).map((k) => [k, merged[k]]),
  ) as unknown as ControlNetConfig;
}

/** The sinusoidal inputs a ControlNet takes at a step, as both engines feed them (host arrays with their shapes). */
export interface ControlNetTimeInputs {
  /** The timestep's projection, [1, block_out_channels[0]]. */
  timeProj: { data: Float32Array; shape: [number, number] };
  /** SDXL's time ids' projection, [rows, 6 × addition_time_embed_dim], when the step has them. */
  timeIds?: { data: Float32Array; shape: [number, number] };
}

/**
 * The timestep (and SDXL's time ids) projected as diffusers' `ControlNetModel` projects them, with its defaults read
 * here once (docs/spec/diffusion.md §5.1): `flip_sin_to_cos` true, `freq_shift` 0, the first block's width 320.
 */
export function controlNetTimeInputs(
  c: ControlNetConfig,
  timestep: number,
  timeIds?: readonly (readonly number[])[],
): ControlNetTimeInputs {
  const C0 = (c.block_out_channels ?? [320])[0];
  const flip = c.flip_sin_to_cos ?? true;
  const shift = c.freq_shift ?? 0;
  const inputs: ControlNetTimeInputs = {
    timeProj: { data: timestepEmbedding(timestep, C0, flip, shift), shape: [1, C0] },
  };
  if (timeIds) {
    const Dt = c.addition_time_embed_dim ?? 0;
    inputs.timeIds = {
      data: timeIdsEmbedding(timeIds, Dt, flip, shift),
      shape: [timeIds.length, TIME_IDS * Dt],
    };
  }
  return inputs;
}

/** The conditioning embedding's widths (diffusers' default when the config omits them). */
export const conditioningWidths = (c: ControlNetConfig): readonly number[] =>
  c.conditioning_embedding_out_channels ?? [16, 32, 96, 256];

/**
 * The ControlNet's config as the UNet config its encoder half is (the up path mirrored, never run), so the UNet's
 * block definitions (`unet.ts`) build it: one definition of the down and mid blocks for both models.
 */
export function controlNetAsUNet(c: ControlNetConfig): UNetConfig {
  const up = [...c.down_block_types].reverse().map((t) => t.replace('Down', 'Up'));
  return {
    ...(c as unknown as UNetConfig),
    in_channels: c.in_channels ?? 4,
    out_channels: c.in_channels ?? 4,
    sample_size: 64,
    up_block_types: up,
    flip_sin_to_cos: c.flip_sin_to_cos ?? true,
    norm_num_groups: c.norm_num_groups ?? 32,
    norm_eps: c.norm_eps ?? 1e-5,
    layers_per_block: c.layers_per_block ?? 2,
    attention_head_dim: c.attention_head_dim ?? 8,
    cross_attention_dim: c.cross_attention_dim ?? 1280,
    block_out_channels: c.block_out_channels ?? [320, 640, 1280, 1280],
  };
}

/** Fields diffusers' ControlNetModel reads that this engine builds only at their defaults. */
const REQUIRED_DEFAULTS: Readonly<Record<string, unknown>> = {
  encoder_hid_dim: null,
  encoder_hid_dim_type: null,
  class_embed_type: null,
  num_class_embeds: null,
  downsample_padding: 1,
  mid_block_scale_factor: 1,
  resnet_time_scale_shift: 'default',
};

/**
 * Checks a ControlNetModel config; throws one line naming the first unsupported field. `textTime`: the pipeline
 * feeds SDXL's added conditioning (an SDXL ControlNet needs it).
 */
export function validateControlNetConfig(raw: unknown, textTime = false): ControlNetConfig {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    throw new Error(`${FILE}: not a JSON object`);
  const c = raw as ControlNetConfig;
  if (c._class_name !== undefined && c._class_name !== 'ControlNetModel')
    throw new Error(`${FILE}: _class_name ${JSON.stringify(c._class_name)} is not ControlNetModel`);
  for (const [key, def] of Object.entries(REQUIRED_DEFAULTS)) {
    const v = c[key];
    if (v !== undefined && v !== def)
      throw new Error(
        `${FILE}: ${key} = ${JSON.stringify(v)} is not supported (only ${JSON.stringify(def)})`,
      );
  }
  const order = c.controlnet_conditioning_channel_order ?? 'rgb';
  if (order !== 'rgb' && order !== 'bgr')
    throw new Error(
      `${FILE}: controlnet_conditioning_channel_order ${JSON.stringify(order)} is not rgb or bgr`,
    );
  const channels = c.conditioning_channels ?? 3;
  if (channels !== 3)
    throw new Error(`${FILE}: conditioning_channels = ${JSON.stringify(channels)} is not supported (only 3)`);
  const widths = conditioningWidths(c);
  if (
    !Array.isArray(widths) ||
    widths.length < 1 ||
    widths.length > 8 ||
    !widths.every((w) => Number.isInteger(w) && w >= 1 && w <= 1 << 16)
  )
    throw new Error(`${FILE}: conditioning_embedding_out_channels needs 1 to 8 positive widths`);
  if (typeof (c.global_pool_conditions ?? false) !== 'boolean')
    throw new Error(`${FILE}: global_pool_conditions must be a boolean`);
  if (c.layers_per_block !== undefined && !Number.isInteger(c.layers_per_block))
    throw new Error(`${FILE}: layers_per_block must be one integer`);
  if (c.addition_embed_type != null && !(textTime && c.addition_embed_type === 'text_time'))
    throw new Error(
      `${FILE}: addition_embed_type = ${JSON.stringify(c.addition_embed_type)} is not supported${c.addition_embed_type === 'text_time' ? ' with an SD 1.x/2.x pipeline' : ''}`,
    );
  validateUNetConfig(controlNetAsUNet(c), { textTime }, FILE);
  return c;
}
