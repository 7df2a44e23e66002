import type { UNetConfig } from '../architectures/unet-config.js';
import type { PipelineFlavour } from './pipelines.js';

/**
 * The UNet2DConditionModel fields that give distilled and pruned model families their shape (docs/spec/diffusion.md
 * §5.1), at their published sizes. The tiny folders of the fidelity tests (§11.1) are derived from this table
 * (`tiny/tiny-families.ts`), never the reverse.
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
  /** The pipeline flavour the family is built around (its text encoders and VAE). */
  readonly flavour: PipelineFlavour;
  readonly unet: Partial<UNetConfig>;
  /**
   * The folder's `requires_aesthetics_score` (SDXL refiner): five time ids, the last an aesthetic score, in place of
   * the target size. Such folders are refused by the pipeline; the UNet itself runs on both engines.
   */
  readonly requiresAestheticsScore?: boolean;
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
   * SDXL refiner 1.0's UNet (its published config: four blocks, transformer depth 4, context from encoder 2 alone,
   * an added embedding of 1280 pooled + 5 × 256 time-id features).
   */
  'sdxl-refiner': {
    models: 'stabilityai/stable-diffusion-xl-refiner-1.0 (its UNet)',
    flavour: 'sdxl',
    requiresAestheticsScore: true,
    unet: {
      block_out_channels: [384, 768, 1536, 1536],
      down_block_types: ['DownBlock2D', 'CrossAttnDownBlock2D', 'CrossAttnDownBlock2D', 'DownBlock2D'],
      up_block_types: ['UpBlock2D', 'CrossAttnUpBlock2D', 'CrossAttnUpBlock2D', 'UpBlock2D'],
      layers_per_block: 2,
      attention_head_dim: [6, 12, 24, 24],
      cross_attention_dim: 1280,
      use_linear_projection: true,
      transformer_layers_per_block: 4,
      addition_embed_type: 'text_time',
      addition_time_embed_dim: 256,
      projection_class_embeddings_input_dim: 2560,
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
