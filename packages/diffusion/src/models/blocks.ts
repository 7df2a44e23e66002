import * as tf from '@tensorflow/tfjs';
import type { WeightSpec } from '../weights/store.js';
import { attention, conv2d, gelu, groupNorm, layerNorm, linear, silu } from './layers.js';

/** Weight lookup by full name. */
export type Weights = (name: string) => tf.Tensor;

// ---- weight declarations (torch shapes, diffusers names) ----

export function normSpecs(p: string, c: number): WeightSpec[] {
  return [
    { name: `${p}.weight`, shape: [c], kind: 'plain' },
    { name: `${p}.bias`, shape: [c], kind: 'plain' },
  ];
}

export function convSpecs(p: string, cin: number, cout: number, k: number): WeightSpec[] {
  return [
    { name: `${p}.weight`, shape: [cout, cin, k, k], kind: 'conv' },
    { name: `${p}.bias`, shape: [cout], kind: 'plain' },
  ];
}

export function linearSpecs(p: string, cin: number, cout: number, bias = true): WeightSpec[] {
  const s: WeightSpec[] = [{ name: `${p}.weight`, shape: [cout, cin], kind: 'linear' }];
  if (bias) s.push({ name: `${p}.bias`, shape: [cout], kind: 'plain' });
  return s;
}

export function resnetSpecs(p: string, cin: number, cout: number, temb: number | null): WeightSpec[] {
  const s = [...normSpecs(`${p}.norm1`, cin), ...convSpecs(`${p}.conv1`, cin, cout, 3)];
  if (temb !== null) s.push(...linearSpecs(`${p}.time_emb_proj`, temb, cout));
  s.push(...normSpecs(`${p}.norm2`, cout), ...convSpecs(`${p}.conv2`, cout, cout, 3));
  if (cin !== cout) s.push(...convSpecs(`${p}.conv_shortcut`, cin, cout, 1));
  return s;
}

export function transformerSpecs(
  p: string,
  c: number,
  contextDim: number,
  linearProj: boolean,
  layers: number,
): WeightSpec[] {
  const s = [...normSpecs(`${p}.norm`, c)];
  const proj = (n: string) => (linearProj ? linearSpecs(`${p}.${n}`, c, c) : convSpecs(`${p}.${n}`, c, c, 1));
  s.push(...proj('proj_in'));
  for (let k = 0; k < layers; k++) {
    const b = `${p}.transformer_blocks.${k}`;
    s.push(...normSpecs(`${b}.norm1`, c), ...normSpecs(`${b}.norm2`, c), ...normSpecs(`${b}.norm3`, c));
    for (const a of ['attn1', 'attn2']) {
      const kv = a === 'attn1' ? c : contextDim;
      s.push(
        ...linearSpecs(`${b}.${a}.to_q`, c, c, false),
        ...linearSpecs(`${b}.${a}.to_k`, kv, c, false),
        ...linearSpecs(`${b}.${a}.to_v`, kv, c, false),
        ...linearSpecs(`${b}.${a}.to_out.0`, c, c),
      );
    }
    s.push(...linearSpecs(`${b}.ff.net.0.proj`, c, 8 * c), ...linearSpecs(`${b}.ff.net.2`, 4 * c, c));
  }
  s.push(...proj('proj_out'));
  return s;
}

export function vaeAttentionSpecs(p: string, c: number): WeightSpec[] {
  return [
    ...normSpecs(`${p}.group_norm`, c),
    ...linearSpecs(`${p}.to_q`, c, c),
    ...linearSpecs(`${p}.to_k`, c, c),
    ...linearSpecs(`${p}.to_v`, c, c),
    ...linearSpecs(`${p}.to_out.0`, c, c),
  ];
}

// ---- forward functions (NHWC) ----

export interface NormOptions {
  groups: number;
  eps: number;
}

/** ResnetBlock2D; `tembAct` is silu(temb) [B, Temb] or null. */
export function resnet(
  w: Weights,
  p: string,
  x: tf.Tensor,
  tembAct: tf.Tensor | null,
  n: NormOptions,
): tf.Tensor {
  let h = conv2d(
    silu(groupNorm(x, n.groups, n.eps, w(`${p}.norm1.weight`), w(`${p}.norm1.bias`))),
    w(`${p}.conv1.weight`),
    w(`${p}.conv1.bias`),
  );
  if (tembAct) {
    const t = linear(tembAct, w(`${p}.time_emb_proj.weight`), w(`${p}.time_emb_proj.bias`));
    const [tb, tc] = t.shape as number[];
    h = tf.add(h, t.reshape([tb, 1, 1, tc]));
  }
  h = conv2d(
    silu(groupNorm(h, n.groups, n.eps, w(`${p}.norm2.weight`), w(`${p}.norm2.bias`))),
    w(`${p}.conv2.weight`),
    w(`${p}.conv2.bias`),
  );
  const cin = x.shape[3];
  const cout = h.shape[3];
  const s = cin !== cout ? conv2d(x, w(`${p}.conv_shortcut.weight`), w(`${p}.conv_shortcut.bias`)) : x;
  return tf.add(s, h);
}

/** Nearest ×2 upsampling (or to an explicit size), then a 3×3 conv. */
export function upsample(w: Weights, p: string, x: tf.Tensor, size?: [number, number]): tf.Tensor {
  const [b, h, wd, c] = x.shape as number[];
  let up: tf.Tensor;
  if (!size || (size[0] === 2 * h && size[1] === 2 * wd)) {
    // Each pixel repeated 2×2: exact, no interpolation arithmetic. Two rank-4 tiles (columns, then
    // rows): tfjs-backend-webgpu runs rank ≥ 5 tiles on the CPU through a browser-only canvas.
    const cols = tf.tile(x.reshape([b * h, wd, 1, c]), [1, 1, 2, 1]).reshape([b * h, 1, 2 * wd, c]);
    up = tf.tile(cols, [1, 2, 1, 1]).reshape([b, 2 * h, 2 * wd, c]);
  } else {
    up = tf.image.resizeNearestNeighbor(x as tf.Tensor4D, size, false, false);
  }
  return conv2d(up, w(`${p}.conv.weight`), w(`${p}.conv.bias`));
}

export function downsample(
  w: Weights,
  p: string,
  x: tf.Tensor,
  pad: 'same-as-torch' | 'right-bottom',
): tf.Tensor {
  return conv2d(x, w(`${p}.conv.weight`), w(`${p}.conv.bias`), 2, pad);
}

/** diffusers Attention with separate q/k/v projections; `context` null = self-attention. */
function crossAttention(
  w: Weights,
  p: string,
  x: tf.Tensor,
  context: tf.Tensor | null,
  heads: number,
  bias: boolean,
): tf.Tensor {
  const src = context ?? x;
  const b = (n: string) => (bias ? w(`${p}.${n}.bias`) : undefined);
  const q = linear(x, w(`${p}.to_q.weight`), b('to_q'));
  const k = linear(src, w(`${p}.to_k.weight`), b('to_k'));
  const v = linear(src, w(`${p}.to_v.weight`), b('to_v'));
  const dh = (q.shape as number[])[2] / heads;
  return linear(attention(q, k, v, heads, dh ** -0.5), w(`${p}.to_out.0.weight`), w(`${p}.to_out.0.bias`));
}

/** Transformer2DModel with BasicTransformerBlocks (docs/spec/diffusion.md §5.4). */
export function transformer2d(
  w: Weights,
  p: string,
  x: tf.Tensor,
  context: tf.Tensor,
  heads: number,
  groups: number,
  linearProj: boolean,
  layers: number,
): tf.Tensor {
  const [B, H, W, C] = x.shape as number[];
  let h = groupNorm(x, groups, 1e-6, w(`${p}.norm.weight`), w(`${p}.norm.bias`));
  if (linearProj) {
    h = linear(h.reshape([B, H * W, C]), w(`${p}.proj_in.weight`), w(`${p}.proj_in.bias`));
  } else {
    h = conv2d(h, w(`${p}.proj_in.weight`), w(`${p}.proj_in.bias`)).reshape([B, H * W, C]);
  }
  for (let k = 0; k < layers; k++) {
    const bp = `${p}.transformer_blocks.${k}`;
    const ln = (n: string, t: tf.Tensor) => layerNorm(t, 1e-5, w(`${bp}.${n}.weight`), w(`${bp}.${n}.bias`));
    h = tf.add(h, crossAttention(w, `${bp}.attn1`, ln('norm1', h), null, heads, false));
    h = tf.add(h, crossAttention(w, `${bp}.attn2`, ln('norm2', h), context, heads, false));
    const proj = linear(ln('norm3', h), w(`${bp}.ff.net.0.proj.weight`), w(`${bp}.ff.net.0.proj.bias`));
    const [a, g] = tf.split(proj, 2, -1);
    h = tf.add(h, linear(tf.mul(a, gelu(g)), w(`${bp}.ff.net.2.weight`), w(`${bp}.ff.net.2.bias`)));
  }
  if (linearProj) {
    h = linear(h, w(`${p}.proj_out.weight`), w(`${p}.proj_out.bias`)).reshape([B, H, W, C]);
  } else {
    h = conv2d(h.reshape([B, H, W, C]), w(`${p}.proj_out.weight`), w(`${p}.proj_out.bias`));
  }
  return tf.add(h, x);
}

/** Single-head VAE mid-block attention (docs/spec/diffusion.md §6). */
export function vaeAttention(w: Weights, p: string, x: tf.Tensor, groups: number): tf.Tensor {
  const [B, H, W, C] = x.shape as number[];
  const h = groupNorm(x, groups, 1e-6, w(`${p}.group_norm.weight`), w(`${p}.group_norm.bias`)).reshape([
    B,
    H * W,
    C,
  ]);
  return tf.add(crossAttention(w, p, h, null, 1, true).reshape([B, H, W, C]), x);
}
