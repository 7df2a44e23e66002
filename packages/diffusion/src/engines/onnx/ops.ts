import type { GraphBuilder } from './graph-builder.js';

/**
 * ONNX building blocks for the SD models (NCHW, as the files and diffusers lay them out). Each
 * mirrors a function of `src/models/blocks.ts` / `layers.ts`; weight names are diffusers names.
 */

const int = (value: number) => ({ kind: 'int', value }) as const;
const ints = (value: readonly number[]) => ({ kind: 'ints', value }) as const;
const float = (value: number) => ({ kind: 'float', value }) as const;
const str = (value: string) => ({ kind: 'string', value }) as const;

/** y = x @ Wᵀ + b over the last axis (W stored transposed in the graph), plus its LoRA branch. */
export function linear(g: GraphBuilder, x: string, p: string, bias = true): string {
  let y = g.node('MatMul', [x, g.weight(`${p}.weight`, 'linear-t')]);
  const [out, inn] = g.weightShape(`${p}.weight`);
  const lora = g.loraInputs(`${p}.weight`, 'linear', inn, out, 1);
  if (lora) y = g.node('Add', [y, g.node('MatMul', [g.node('MatMul', [x, lora.down]), lora.up])]);
  return bias ? g.node('Add', [y, g.weight(`${p}.bias`)]) : y;
}

/** 2-D convolution; `pads` in ONNX order [top, left, bottom, right]. */
export function conv(
  g: GraphBuilder,
  x: string,
  p: string,
  kernel: number,
  stride = 1,
  pads: readonly number[] = kernel === 3 ? [1, 1, 1, 1] : [0, 0, 0, 0],
): string {
  const attrs = { kernel_shape: ints([kernel, kernel]), strides: ints([stride, stride]), pads: ints(pads) };
  const y = g.node('Conv', [x, g.weight(`${p}.weight`), g.weight(`${p}.bias`)], attrs);
  const [out, inn] = g.weightShape(`${p}.weight`);
  const lora = g.loraInputs(`${p}.weight`, 'conv', inn, out, kernel);
  if (!lora) return y;
  // LoRA branch: `down` with W's kernel, stride and padding, then `up` as a 1×1 conv.
  const down = g.node('Conv', [x, lora.down], attrs);
  return g.node('Add', [y, g.node('Conv', [down, lora.up], { kernel_shape: ints([1, 1]) })]);
}

export function silu(g: GraphBuilder, x: string): string {
  return g.node('Mul', [x, g.node('Sigmoid', [x])]);
}

export function quickGelu(g: GraphBuilder, x: string): string {
  return g.node('Mul', [x, g.node('Sigmoid', [g.node('Mul', [x, g.scalar(1.702)])])]);
}

/** Exact erf GELU, in the pattern ORT's optimiser fuses into one Gelu kernel. */
export function gelu(g: GraphBuilder, x: string): string {
  const e = g.node('Erf', [g.node('Div', [x, g.scalar(Math.SQRT2)])]);
  return g.node('Mul', [g.node('Mul', [x, g.node('Add', [e, g.scalar(1)])]), g.scalar(0.5)]);
}

/**
 * GroupNorm over consecutive channel groups: InstanceNormalization on [B, G, C/G·H·W] (unit
 * scale), then the per-channel affine. Works for any batch and spatial size.
 */
export function groupNorm(g: GraphBuilder, x: string, p: string, groups: number, eps: number): string {
  const shape = g.node('Shape', [x]);
  const grouped = g.node('Reshape', [x, g.ints([0, groups, -1])]);
  const normed = g.node(
    'InstanceNormalization',
    [
      grouped,
      g.floats(new Float32Array(groups).fill(1), [groups]),
      g.floats(new Float32Array(groups), [groups]),
    ],
    {
      epsilon: float(eps),
    },
  );
  const back = g.node('Reshape', [normed, shape]);
  return g.node('Add', [
    g.node('Mul', [back, g.weight(`${p}.weight`, 'channel')]),
    g.weight(`${p}.bias`, 'channel'),
  ]);
}

export function layerNorm(g: GraphBuilder, x: string, p: string, eps: number): string {
  return g.node('LayerNormalization', [x, g.weight(`${p}.weight`), g.weight(`${p}.bias`)], {
    axis: int(-1),
    epsilon: float(eps),
  });
}

/** How scaled-dot-product attention is expressed in the graph. */
export type AttentionKind =
  /** standard opset ops: Reshape/Transpose/MatMul/Softmax (any runtime) */
  | 'standard'
  /** com.microsoft MultiHeadAttention (ORT CPU and CUDA kernels; fused, no score transposes) */
  | 'fused';

export interface AttentionOptions {
  kind: AttentionKind;
}

/**
 * Multi-head attention: q [B, Lq, h·dh], k/v [B, Lk, h·dh] → [B, Lq, h·dh]; scores scaled by
 * `scale`, plus an additive `mask` [Lq, Lk] when given (standard form only).
 */
export function attention(
  g: GraphBuilder,
  q: string,
  k: string,
  v: string,
  heads: number,
  dh: number,
  scale: number,
  opts: AttentionOptions,
  mask?: string,
): string {
  if (opts.kind === 'fused' && !mask)
    return g.node(
      'MultiHeadAttention',
      [q, k, v],
      { num_heads: int(heads), scale: float(scale) },
      undefined,
      'com.microsoft',
    );
  const split = (t: string, perm: number[]) =>
    g.node('Transpose', [g.node('Reshape', [t, g.ints([0, 0, heads, dh])])], { perm: ints(perm) });
  const qh = split(g.node('Mul', [q, g.scalar(scale)]), [0, 2, 1, 3]);
  const kt = split(k, [0, 2, 3, 1]);
  const vh = split(v, [0, 2, 1, 3]);
  let scores = g.node('MatMul', [qh, kt]);
  if (mask) scores = g.node('Add', [scores, mask]);
  const out = g.node('MatMul', [g.node('Softmax', [scores], { axis: int(-1) }), vh]);
  return g.node('Reshape', [
    g.node('Transpose', [out], { perm: ints([0, 2, 1, 3]) }),
    g.ints([0, 0, heads * dh]),
  ]);
}

/** NCHW → tokens [B, H·W, C] (row-major pixels, channel last). */
export function tokens(g: GraphBuilder, x: string): string {
  return g.node('Transpose', [g.node('Reshape', [x, g.ints([0, 0, -1])])], { perm: ints([0, 2, 1]) });
}

/** tokens [B, H·W, C] → NCHW with the shape of `like`. */
export function image(g: GraphBuilder, h: string, like: string): string {
  return g.node('Reshape', [g.node('Transpose', [h], { perm: ints([0, 2, 1]) }), g.node('Shape', [like])]);
}

export interface NormOptions {
  groups: number;
  eps: number;
}

/** ResnetBlock2D; `tembAct` is silu(temb) [B or 1, Temb], or null (VAE). */
export function resnet(
  g: GraphBuilder,
  p: string,
  x: string,
  tembAct: string | null,
  n: NormOptions,
): string {
  let h = conv(g, silu(g, groupNorm(g, x, `${p}.norm1`, n.groups, n.eps)), `${p}.conv1`, 3);
  if (tembAct) {
    const t = linear(g, tembAct, `${p}.time_emb_proj`);
    h = g.node('Add', [h, g.node('Unsqueeze', [t, g.ints([2, 3])])]);
  }
  h = conv(g, silu(g, groupNorm(g, h, `${p}.norm2`, n.groups, n.eps)), `${p}.conv2`, 3);
  const s = g.hasWeight(`${p}.conv_shortcut.weight`) ? conv(g, x, `${p}.conv_shortcut`, 1) : x;
  return g.node('Add', [s, h]);
}

const NEAREST = {
  mode: str('nearest'),
  coordinate_transformation_mode: str('asymmetric'),
  nearest_mode: str('floor'),
};

/**
 * Nearest upsampling then a 3×3 conv: ×2, or to the spatial size of `sizeOf` (odd latent sizes,
 * as diffusers passes the next skip's size). Asymmetric/floor nearest is torch's `nearest`.
 */
export function upsample(g: GraphBuilder, p: string, x: string, sizeOf?: string): string {
  let up: string;
  if (sizeOf) {
    const sizes = g.node(
      'Concat',
      [
        g.node('Slice', [g.node('Shape', [x]), g.ints([0]), g.ints([2])]),
        g.node('Slice', [g.node('Shape', [sizeOf]), g.ints([2]), g.ints([4])]),
      ],
      { axis: int(0) },
    );
    up = g.node('Resize', [x, '', '', sizes], NEAREST);
  } else up = g.node('Resize', [x, '', g.floats([1, 1, 2, 2], [4], 'f32')], NEAREST);
  return conv(g, up, `${p}.conv`, 3);
}

/** diffusers Attention with separate q/k/v projections; `context` null = self-attention. */
export function crossAttention(
  g: GraphBuilder,
  p: string,
  x: string,
  context: string | null,
  channels: number,
  heads: number,
  bias: boolean,
  opts: AttentionOptions,
): string {
  const src = context ?? x;
  const q = linear(g, x, `${p}.to_q`, bias);
  const k = linear(g, src, `${p}.to_k`, bias);
  const v = linear(g, src, `${p}.to_v`, bias);
  const dh = channels / heads;
  return linear(g, attention(g, q, k, v, heads, dh, dh ** -0.5, opts), `${p}.to_out.0`);
}

export interface TransformerOptions extends AttentionOptions {
  channels: number;
  heads: number;
  groups: number;
  linearProj: boolean;
  layers: number;
}

/** Transformer2DModel with BasicTransformerBlocks (docs/spec/diffusion.md §5.4). */
export function transformer2d(
  g: GraphBuilder,
  p: string,
  x: string,
  context: string,
  o: TransformerOptions,
): string {
  const C = o.channels;
  let h = groupNorm(g, x, `${p}.norm`, o.groups, 1e-6);
  h = o.linearProj ? linear(g, tokens(g, h), `${p}.proj_in`) : tokens(g, conv(g, h, `${p}.proj_in`, 1));
  for (let k = 0; k < o.layers; k++) {
    const b = `${p}.transformer_blocks.${k}`;
    h = g.node('Add', [
      h,
      crossAttention(g, `${b}.attn1`, layerNorm(g, h, `${b}.norm1`, 1e-5), null, C, o.heads, false, o),
    ]);
    h = g.node('Add', [
      h,
      crossAttention(g, `${b}.attn2`, layerNorm(g, h, `${b}.norm2`, 1e-5), context, C, o.heads, false, o),
    ]);
    const proj = linear(g, layerNorm(g, h, `${b}.norm3`, 1e-5), `${b}.ff.net.0.proj`);
    const [a, gate] = g.nodeN('Split', [proj, g.ints([4 * C, 4 * C])], 2, { axis: int(-1) });
    h = g.node('Add', [h, linear(g, g.node('Mul', [a, gelu(g, gate)]), `${b}.ff.net.2`)]);
  }
  const out = o.linearProj
    ? image(g, linear(g, h, `${p}.proj_out`), x)
    : conv(g, image(g, h, x), `${p}.proj_out`, 1);
  return g.node('Add', [out, x]);
}

/** Single-head VAE mid-block attention (docs/spec/diffusion.md §6). */
export function vaeAttention(
  g: GraphBuilder,
  p: string,
  x: string,
  channels: number,
  groups: number,
  opts: AttentionOptions,
): string {
  const h = tokens(g, groupNorm(g, x, `${p}.group_norm`, groups, 1e-6));
  return g.node('Add', [image(g, crossAttention(g, p, h, null, channels, 1, true, opts), x), x]);
}

/** NHWC graph input → NCHW, and back for outputs (the pipeline's tensors are NHWC). */
export function fromNhwc(g: GraphBuilder, x: string): string {
  return g.node('Transpose', [x], { perm: ints([0, 3, 1, 2]) });
}

export function toNhwc(g: GraphBuilder, x: string): string {
  return g.node('Transpose', [x], { perm: ints([0, 2, 3, 1]) });
}
