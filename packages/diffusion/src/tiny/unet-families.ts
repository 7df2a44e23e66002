import type { UNetConfig } from '../architectures/unet-config.js';
import type { TinyFlavour } from './tiny-configs.js';

/**
 * The UNet2DConditionModel fields that give distilled and pruned model families their shape (docs/spec/diffusion.md
 * §5.1), at their published sizes, and the tiny folders derived from them for the fidelity tests (§11.1). Tiny
 * configs are derived from this table, never the reverse.
 *
 * Sources (no hub access where this was written, so each row says how far it was checked): the BK-SDM paper
 * (arXiv 2305.15798: BK-SDM-Small keeps one resnet-attention pair per stage and drops the mid block, Tiny also drops
 * the innermost stage) for bk-sdm-small/tiny and segmind's small-sd/tiny-sd built on them; the SDXS card (SD 2.1
 * base with the mid block removed) for sdxs-512; for SSD-1B and Vega, the down depths ComfyUI's model detection
 * reads ([0,0,2,2,4,4] and [0,0,1,1,2,2] per layer), diffusers PR 5400 (asymmetric up depths and the one-resnet
 * UNetMidBlock2D added for SSD-1B) and the SSD-1B-anime card (the third layer of the first up block keeps SDXL's
 * 10 blocks). Vega's up depths and mid block are not confirmed here: its row mirrors its down depths. Check:
 * the rows declare BK-SDM-Small's 482.3M and Tiny's 323.4M UNet parameters (the paper's), Vega's 745M and SSD-1B's
 * 1.3B (their cards'). The SDXS row (SD 2.1's context, linear projections and per-block heads on a BK-SDM-Small
 * shape) declares 485.8M, more than the 319M its card gives: its exact pruning is not confirmed here.
 */
export interface UNetFamily {
  /** The models this row stands for. */
  readonly models: string;
  /** The tiny pipeline flavour the derived folder is built around (its text encoders and VAE). */
  readonly flavour: TinyFlavour;
  readonly unet: Partial<UNetConfig>;
}

const SD_DOWN = ['CrossAttnDownBlock2D', 'CrossAttnDownBlock2D', 'CrossAttnDownBlock2D', 'DownBlock2D'];
const SD_UP = ['UpBlock2D', 'CrossAttnUpBlock2D', 'CrossAttnUpBlock2D', 'CrossAttnUpBlock2D'];
const XL_DOWN = ['DownBlock2D', 'CrossAttnDownBlock2D', 'CrossAttnDownBlock2D'];
const XL_UP = ['CrossAttnUpBlock2D', 'CrossAttnUpBlock2D', 'UpBlock2D'];
const SDXL_ADDED = {
  addition_embed_type: 'text_time',
  addition_time_embed_dim: 256,
  projection_class_embeddings_input_dim: 2816,
};

export const UNET_FAMILIES = {
  'bk-sdm-small': {
    models: 'nota-ai/bk-sdm-small, segmind/small-sd',
    flavour: 'sd1',
    unet: {
      block_out_channels: [320, 640, 1280, 1280],
      down_block_types: SD_DOWN,
      up_block_types: SD_UP,
      layers_per_block: 1,
      mid_block_type: null,
      attention_head_dim: 8,
      cross_attention_dim: 768,
    },
  },
  'bk-sdm-tiny': {
    models: 'nota-ai/bk-sdm-tiny, segmind/tiny-sd',
    flavour: 'sd1',
    unet: {
      block_out_channels: [320, 640, 1280],
      down_block_types: SD_DOWN.slice(0, 3),
      up_block_types: SD_UP.slice(1),
      layers_per_block: 1,
      mid_block_type: null,
      attention_head_dim: 8,
      cross_attention_dim: 768,
    },
  },
  'sdxs-512': {
    models: 'IDKiro/sdxs-512-0.9 (SD 2.1 base, pruned)',
    flavour: 'sd2',
    unet: {
      block_out_channels: [320, 640, 1280, 1280],
      down_block_types: SD_DOWN,
      up_block_types: SD_UP,
      layers_per_block: 1,
      mid_block_type: null,
      attention_head_dim: [5, 10, 20, 20],
      cross_attention_dim: 1024,
      use_linear_projection: true,
      upcast_attention: false,
    },
  },
  'ssd-1b': {
    models: 'segmind/SSD-1B',
    flavour: 'sdxl',
    unet: {
      block_out_channels: [320, 640, 1280],
      down_block_types: XL_DOWN,
      up_block_types: XL_UP,
      layers_per_block: 2,
      mid_block_type: 'UNetMidBlock2D',
      attention_head_dim: [5, 10, 20],
      cross_attention_dim: 2048,
      use_linear_projection: true,
      transformer_layers_per_block: [
        [0, 0],
        [2, 2],
        [4, 4],
      ],
      reverse_transformer_layers_per_block: [
        [4, 4, 10],
        [1, 1, 1],
        [0, 0, 0],
      ],
      ...SDXL_ADDED,
    },
  },
  'segmind-vega': {
    models: 'segmind/Segmind-Vega',
    flavour: 'sdxl',
    unet: {
      block_out_channels: [320, 640, 1280],
      down_block_types: XL_DOWN,
      up_block_types: XL_UP,
      layers_per_block: 2,
      mid_block_type: 'UNetMidBlock2D',
      attention_head_dim: [5, 10, 20],
      cross_attention_dim: 2048,
      use_linear_projection: true,
      transformer_layers_per_block: [0, 1, 2],
      ...SDXL_ADDED,
    },
  },
  /**
   * Not a published model: the remaining per-block fields diffusers 0.27 accepts, together — layers per block as a
   * list, only_cross_attention per block, cross_attention_dim as a list, upcast_attention, a depth of 0 in an
   * attention block, per-layer depths into a cross-attention mid block (which reads the first).
   */
  'per-block-mix': {
    models: 'every remaining per-block field at once',
    flavour: 'sd1',
    unet: {
      block_out_channels: [320, 640, 1280],
      down_block_types: ['CrossAttnDownBlock2D', 'DownBlock2D', 'CrossAttnDownBlock2D'],
      up_block_types: ['CrossAttnUpBlock2D', 'UpBlock2D', 'CrossAttnUpBlock2D'],
      layers_per_block: [1, 2, 3],
      mid_block_type: 'UNetMidBlock2DCrossAttn',
      attention_head_dim: [8, 8, 16],
      cross_attention_dim: [768, 768, 768],
      only_cross_attention: [true, false, false],
      upcast_attention: true,
      transformer_layers_per_block: [[1], 1, [2, 0, 1]],
      reverse_transformer_layers_per_block: [
        [0, 2, 1, 1],
        [1, 1, 1],
        [1, 0],
      ],
    },
  },
} as const satisfies Record<string, UNetFamily>;

export type UNetFamilyName = keyof typeof UNET_FAMILIES;

/** Tiny widths: 320 → 32, wider → 64 (a multiple of the tiny norm's 32 groups). */
const tinyChannels = (c: number) => (c <= 320 ? 32 : 64);
/** The most heads up to the family's count that divide the tiny width. */
const tinyHeads = (h: number, channels: number) => {
  for (let k = Math.min(h, channels / 4); k > 1; k--) if (channels % k === 0) return k;
  return 1;
};
/** Depths halved, rounded up: 0 stays 0 and unequal depths stay unequal. */
const tinyDepths = (v: unknown): unknown =>
  Array.isArray(v) ? v.map(tinyDepths) : typeof v === 'number' ? Math.ceil(v / 2) : v;
const each = <T, U>(v: T | readonly T[], f: (x: T, i: number) => U): U | U[] =>
  Array.isArray(v) ? (v as readonly T[]).map(f) : f(v as T, 0);

/** The tiny UNet config of a family (the fields its folder's base flavour does not already fix). */
export function tinyFamilyUNet(name: UNetFamilyName, context: number): Partial<UNetConfig> {
  const u: Partial<UNetConfig> = UNET_FAMILIES[name].unet;
  const C = (u.block_out_channels as number[]).map(tinyChannels);
  const heads = u.attention_head_dim as number | readonly number[];
  const out: Partial<UNetConfig> = {
    ...u,
    block_out_channels: C,
    attention_head_dim: Array.isArray(heads)
      ? heads.map((h, i) => tinyHeads(h, C[i]))
      : tinyHeads(heads as number, Math.min(...C)),
    cross_attention_dim: each(u.cross_attention_dim as number | readonly number[], () => context),
  };
  if (u.transformer_layers_per_block !== undefined)
    out.transformer_layers_per_block = tinyDepths(
      u.transformer_layers_per_block,
    ) as UNetConfig['transformer_layers_per_block'];
  if (u.reverse_transformer_layers_per_block !== undefined)
    out.reverse_transformer_layers_per_block = tinyDepths(
      u.reverse_transformer_layers_per_block,
    ) as UNetConfig['reverse_transformer_layers_per_block'];
  if (u.addition_embed_type === 'text_time') {
    out.addition_time_embed_dim = 8;
    // The tiny SDXL encoder 2's projection (40) and six time ids of 8.
    out.projection_class_embeddings_input_dim = 40 + 6 * 8;
  }
  return out;
}
