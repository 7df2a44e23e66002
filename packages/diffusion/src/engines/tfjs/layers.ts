import * as tf from '@tensorflow/tfjs';
import { linearBranches, lowRankBranchesFor, upChannels } from './low-rank.js';

/** Building blocks in NHWC / [..., features] layout (docs/spec/diffusion.md §12). Callers run them inside tf.tidy. */

/** y = x @ W + b with W stored [in, out]. */
export function linear(x: tf.Tensor, w: tf.Tensor, b?: tf.Tensor): tf.Tensor {
  const [inDim, outDim] = w.shape as number[];
  const lead = x.shape.slice(0, -1);
  const x2d = x.reshape([-1, inDim]) as tf.Tensor2D;
  let y = tf.matMul(x2d, w as tf.Tensor2D);
  // Unfused LoRA of this request (docs/spec/diffusion.md §9.3): base weights stay untouched.
  const branches = lowRankBranchesFor(w);
  if (branches) y = tf.add(y, linearBranches(x2d, branches));
  if (b) y = tf.add(y, b);
  return y.reshape([...lead, outDim]);
}

/** 2-D convolution with a filter [kh, kw, I, O]; `pad` pixels on every side (or right/bottom only). */
export function conv2d(
  x: tf.Tensor,
  w: tf.Tensor,
  b: tf.Tensor | undefined,
  stride = 1,
  pad: 'same-as-torch' | 'right-bottom' = 'same-as-torch',
): tf.Tensor4D {
  const k = (w.shape as number[])[0];
  let input = x as tf.Tensor4D;
  let y: tf.Tensor4D;
  if (k === 1) {
    y = tf.conv2d(input, w as tf.Tensor4D, stride, 'valid');
  } else if (stride === 1 && pad === 'same-as-torch') {
    y = tf.conv2d(input, w as tf.Tensor4D, 1, 'same');
  } else {
    // TF 'same' pads stride-2 convs asymmetrically: pad explicitly (docs/spec/diffusion.md §12 padding trap).
    const p = (k - 1) / 2;
    input =
      pad === 'right-bottom'
        ? tf.pad(input, [
            [0, 0],
            [0, 1],
            [0, 1],
            [0, 0],
          ])
        : tf.pad(input, [
            [0, 0],
            [p, p],
            [p, p],
            [0, 0],
          ]);
    y = tf.conv2d(input, w as tf.Tensor4D, stride, 'valid');
  }
  // Unfused LoRA: `down` is a conv with W's kernel, stride and padding, `up` a 1×1 conv.
  for (const branch of lowRankBranchesFor(w) ?? [])
    y = tf.add(y, upChannels(conv2d(x, branch.down, undefined, stride, pad), branch.up));
  return b ? tf.add(y, b) : y;
}

export function silu(x: tf.Tensor): tf.Tensor {
  return tf.mul(x, tf.sigmoid(x));
}

export function quickGelu(x: tf.Tensor): tf.Tensor {
  return tf.mul(x, tf.sigmoid(tf.mul(x, 1.702)));
}

/** Exact (erf) GELU. */
export function gelu(x: tf.Tensor): tf.Tensor {
  return tf.mul(tf.mul(x, 0.5), tf.add(1, tf.erf(tf.mul(x, Math.SQRT1_2))));
}

/** GroupNorm over consecutive channel groups of an NHWC tensor. */
export function groupNorm(
  x: tf.Tensor,
  groups: number,
  eps: number,
  gamma: tf.Tensor,
  beta: tf.Tensor,
): tf.Tensor {
  const [b, h, w, c] = x.shape as number[];
  const g = x.reshape([b, h, w, groups, c / groups]);
  const { mean, variance } = tf.moments(g, [1, 2, 4], true);
  const normed = tf.mul(tf.sub(g, mean), tf.rsqrt(tf.add(variance, eps))).reshape([b, h, w, c]);
  return tf.add(tf.mul(normed, gamma), beta);
}

export function layerNorm(x: tf.Tensor, eps: number, gamma: tf.Tensor, beta: tf.Tensor): tf.Tensor {
  const { mean, variance } = tf.moments(x, -1, true);
  return tf.add(tf.mul(tf.mul(tf.sub(x, mean), tf.rsqrt(tf.add(variance, eps))), gamma), beta);
}

/** Largest score block (elements) computed at once; bounds attention memory (docs/spec/diffusion.md §12). */
const MAX_SCORE_ELEMENTS = 16 * 1024 * 1024;

/**
 * Multi-head attention: q [B, Lq, h·dh], k/v [B, Lk, h·dh] → [B, Lq, h·dh].
 * `scale` multiplies the scores; an optional additive `mask` [Lq, Lk] is applied before softmax.
 * Long queries are processed in chunks so the score matrix stays bounded.
 */
export function attention(
  q: tf.Tensor,
  k: tf.Tensor,
  v: tf.Tensor,
  heads: number,
  scale: number,
  mask?: tf.Tensor,
): tf.Tensor {
  const [b, lq, inner] = q.shape as number[];
  const lk = (k.shape as number[])[1];
  const dh = inner / heads;
  const split = (t: tf.Tensor, l: number) => t.reshape([b, l, heads, dh]).transpose([0, 2, 1, 3]);
  const qh = split(q, lq);
  const kh = split(k, lk);
  const vh = split(v, lk);
  const chunk = Math.max(1, Math.min(lq, Math.floor(MAX_SCORE_ELEMENTS / (b * heads * lk))));
  const parts: tf.Tensor[] = [];
  for (let start = 0; start < lq; start += chunk) {
    const size = Math.min(chunk, lq - start);
    const part = tf.tidy(() => {
      const qc = size === lq ? qh : qh.slice([0, 0, start, 0], [b, heads, size, dh]);
      let scores = tf.mul(tf.matMul(qc, kh, false, true), scale);
      if (mask) scores = tf.add(scores, size === lq ? mask : mask.slice([start, 0], [size, lk]));
      return tf.matMul(tf.softmax(scores), vh);
    });
    parts.push(part);
  }
  const out = parts.length === 1 ? parts[0] : tf.concat(parts, 2);
  return out.transpose([0, 2, 1, 3]).reshape([b, lq, inner]);
}
