import type { Ops } from '../ops/ops.js';

/** The blocks the SD architectures share, defined once over {@link Ops}. */

export interface NormOptions {
  groups: number;
  eps: number;
}

/** ResnetBlock2D from `cin` to `cout` channels; `tembAct` is silu(temb) `[B or 1, Temb]` or null (VAE). */
export function resnet<T>(
  o: Ops<T>,
  p: string,
  x: T,
  tembAct: T | null,
  n: NormOptions,
  cin: number,
  cout: number,
): T {
  let h = o.conv2d(o.silu(o.groupNorm(x, `${p}.norm1`, n.groups, n.eps)), `${p}.conv1`, cout, 3);
  if (tembAct) h = o.addPerChannel(h, o.linear(tembAct, `${p}.time_emb_proj`, cout));
  h = o.conv2d(o.silu(o.groupNorm(h, `${p}.norm2`, n.groups, n.eps)), `${p}.conv2`, cout, 3);
  const s = cin !== cout ? o.conv2d(x, `${p}.conv_shortcut`, cout, 1) : x;
  return o.add(s, h);
}

/** Nearest ×2 upsampling (or to the size of `like`), then a 3×3 conv keeping the `channels`. */
export function upsample<T>(o: Ops<T>, p: string, x: T, channels: number, like?: T): T {
  return o.conv2d(o.upsampleNearest(x, like), `${p}.conv`, channels, 3);
}

/** diffusers Attention with separate q/k/v projections; `context` null = self-attention. */
function crossAttention<T>(
  o: Ops<T>,
  p: string,
  x: T,
  context: T | null,
  channels: number,
  heads: number,
  bias: boolean,
): T {
  const src = context ?? x;
  const q = o.linear(x, `${p}.to_q`, channels, bias);
  const k = o.linear(src, `${p}.to_k`, channels, bias);
  const v = o.linear(src, `${p}.to_v`, channels, bias);
  const headDim = channels / heads;
  const attended = o.attention(q, k, v, { heads, headDim, scale: headDim ** -0.5 });
  return o.linear(attended, `${p}.to_out.0`, channels);
}

export interface TransformerOptions {
  channels: number;
  heads: number;
  groups: number;
  linearProj: boolean;
  layers: number;
  /** The first attention of each block attends to the context too (`only_cross_attention`). */
  onlyCross?: boolean;
}

/** Transformer2DModel with BasicTransformerBlocks (docs/spec/diffusion.md §5.4). */
export function transformer2d<T>(o: Ops<T>, p: string, x: T, context: T, t: TransformerOptions): T {
  const C = t.channels;
  let h = o.groupNorm(x, `${p}.norm`, t.groups, 1e-6);
  h = t.linearProj
    ? o.linear(o.toTokens(h), `${p}.proj_in`, C)
    : o.toTokens(o.conv2d(h, `${p}.proj_in`, C, 1));
  for (let k = 0; k < t.layers; k++) {
    const b = `${p}.transformer_blocks.${k}`;
    h = o.add(
      h,
      crossAttention(
        o,
        `${b}.attn1`,
        o.layerNorm(h, `${b}.norm1`, 1e-5),
        t.onlyCross ? context : null,
        C,
        t.heads,
        false,
      ),
    );
    h = o.add(
      h,
      crossAttention(o, `${b}.attn2`, o.layerNorm(h, `${b}.norm2`, 1e-5), context, C, t.heads, false),
    );
    // GEGLU feed-forward: 4·C hidden features, gated.
    const proj = o.linear(o.layerNorm(h, `${b}.norm3`, 1e-5), `${b}.ff.net.0.proj`, 8 * C);
    const [a, gate] = o.splitLast(proj, [4 * C, 4 * C]);
    h = o.add(h, o.linear(o.mul(a, o.gelu(gate)), `${b}.ff.net.2`, C));
  }
  const out = t.linearProj
    ? o.toImage(o.linear(h, `${p}.proj_out`, C), x)
    : o.conv2d(o.toImage(h, x), `${p}.proj_out`, C, 1);
  return o.add(out, x);
}

/** Single-head VAE mid-block attention (docs/spec/diffusion.md §6). */
export function vaeAttention<T>(o: Ops<T>, p: string, x: T, channels: number, groups: number): T {
  const h = o.toTokens(o.groupNorm(x, `${p}.group_norm`, groups, 1e-6));
  return o.add(o.toImage(crossAttention(o, p, h, null, channels, 1, true), x), x);
}
