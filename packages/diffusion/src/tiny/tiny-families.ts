import { AESTHETIC_TIME_IDS, TIME_IDS } from '../architectures/timestep-embedding.js';
import type { UNetConfig } from '../architectures/unet-config.js';
import { UNET_FAMILIES, type UNetFamily, type UNetFamilyName } from '../families/unet-families.js';

/**
 * The tiny UNets of the model families (`families/unet-families.ts`, docs/spec/diffusion.md §11.1): each family's
 * block layout at tiny widths and halved depths.
 */

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
    // The tiny SDXL encoder 2's projection (40) and six time ids of 8 (five with an aesthetic score).
    const ids = (UNET_FAMILIES[name] as UNetFamily).requiresAestheticsScore ? AESTHETIC_TIME_IDS : TIME_IDS;
    out.projection_class_embeddings_input_dim = 40 + ids * 8;
  }
  return out;
}
