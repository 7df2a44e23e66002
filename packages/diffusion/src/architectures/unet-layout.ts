import { midBlockKind, perBlock, type UNetConfig } from './unet-config.js';

/**
 * A UNet2DConditionModel config resolved per block as diffusers 0.27 builds its modules from it
 * (docs/spec/diffusion.md §5.1): every per-block field expanded to a list, the up path's values reversed (or taken
 * from `reverse_transformer_layers_per_block`), the transformer depth of every layer.
 */
export interface UNetBlockLayout {
  /** The block's output channels. */
  readonly channels: number;
  /** Resnets in the block (down: `layers_per_block[i]`, up: the reversed value + 1). */
  readonly layers: number;
  /** Transformer depth after each resnet; null for a block without attention (DownBlock2D, UpBlock2D). */
  readonly depths: readonly number[] | null;
  readonly heads: number;
  /** The transformers' self-attention attends to the context too (`only_cross_attention`). */
  readonly onlyCross: boolean;
}

export type UNetMidLayout =
  | { readonly kind: 'none' }
  /** UNetMidBlock2D as UNet2DConditionModel builds it: one resnet, no attention. */
  | { readonly kind: 'resnet' }
  /** UNetMidBlock2DCrossAttn: resnet, transformer of `depth` blocks, resnet. */
  | { readonly kind: 'cross'; readonly depth: number; readonly heads: number };

export interface UNetLayout {
  readonly C: readonly number[];
  readonly down: readonly UNetBlockLayout[];
  readonly mid: UNetMidLayout;
  readonly up: readonly UNetBlockLayout[];
  /** Time-embedding width (4·C0). */
  readonly temb: number;
  /** The context's width (every block reads the same encoder hidden states). */
  readonly contextDim: number;
}

/** A block's transformer depth given once or per layer, as a list of `layers`. */
const perLayer = (v: number | readonly number[], layers: number): number[] =>
  Array.isArray(v) ? v.slice(0, layers) : Array<number>(layers).fill(v as number);

/** The per-block layout of a config `validateUNetConfig` accepted. */
export function unetLayout(c: UNetConfig): UNetLayout {
  const C = c.block_out_channels;
  const N = C.length;
  const heads = perBlock(c.num_attention_heads ?? c.attention_head_dim, N);
  const layers = perBlock(c.layers_per_block, N);
  const depths = perBlock(c.transformer_layers_per_block ?? 1, N);
  const onlyCross = perBlock(c.only_cross_attention ?? false, N);
  const reverse = c.reverse_transformer_layers_per_block;
  const upDepths = reverse === undefined || reverse === null ? [...depths].reverse() : perBlock(reverse, N);
  const down = C.map((channels, i) => ({
    channels,
    layers: layers[i],
    depths: c.down_block_types[i] === 'CrossAttnDownBlock2D' ? perLayer(depths[i], layers[i]) : null,
    heads: heads[i],
    onlyCross: onlyCross[i],
  }));
  const up = C.map((_, i) => {
    const r = N - 1 - i;
    const n = layers[r] + 1;
    return {
      channels: C[r],
      layers: n,
      depths: c.up_block_types[i] === 'CrossAttnUpBlock2D' ? perLayer(upDepths[i], n) : null,
      heads: heads[r],
      onlyCross: onlyCross[r],
    };
  });
  const kind = midBlockKind(c) ?? 'cross';
  const last = depths[N - 1];
  const mid: UNetMidLayout =
    kind === 'cross'
      ? { kind, depth: Array.isArray(last) ? last[0] : (last as number), heads: heads[N - 1] }
      : { kind };
  const contextDim = perBlock(c.cross_attention_dim, N)[0];
  return { C, down, mid, up, temb: 4 * C[0], contextDim };
}
