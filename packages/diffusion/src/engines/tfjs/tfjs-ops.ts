import * as tf from '@tensorflow/tfjs';
import type { AttentionShape, ConvPadding, EmbeddingTables, Ops } from '../../ops/ops.js';
import { attention, conv2d, gelu, groupNorm, layerNorm, linear, quickGelu, silu } from './layers.js';

/** Weight lookup by full diffusers name, in TF.js layout (`WeightStore.get`). */
export type Weights = (name: string) => tf.Tensor;

/** Lowest float32: the causal mask's value above the diagonal (as transformers). */
const LOWEST = -3.4028234663852886e38;

/**
 * The operations on TF.js tensors, run eagerly (images NHWC). Callers run a forward pass inside `tf.tidy`;
 * LoRA branches of the request come from `withLowRankBranches` (see `layers.ts`).
 */
export class TfjsOps implements Ops<tf.Tensor> {
  constructor(private readonly w: Weights) {}

  linear(x: tf.Tensor, param: string, _out: number, bias = true): tf.Tensor {
    return linear(x, this.w(`${param}.weight`), bias ? this.w(`${param}.bias`) : undefined);
  }

  conv2d(
    x: tf.Tensor,
    param: string,
    _out: number,
    _kernel: number,
    stride = 1,
    pad: ConvPadding = 'symmetric',
    bias = true,
  ): tf.Tensor {
    return conv2d(
      x,
      this.w(`${param}.weight`),
      bias ? this.w(`${param}.bias`) : undefined,
      stride,
      pad === 'symmetric' ? 'same-as-torch' : 'right-bottom',
    );
  }

  groupNorm(x: tf.Tensor, param: string, groups: number, eps: number): tf.Tensor {
    return groupNorm(x, groups, eps, this.w(`${param}.weight`), this.w(`${param}.bias`));
  }

  layerNorm(x: tf.Tensor, param: string, eps: number): tf.Tensor {
    return layerNorm(x, eps, this.w(`${param}.weight`), this.w(`${param}.bias`));
  }

  tokenEmbedding(
    ids: tf.Tensor,
    tokenParam: string,
    positionParam: string,
    _tables: EmbeddingTables,
  ): tf.Tensor {
    const L = ids.shape[1] as number;
    const positions = this.w(positionParam);
    return tf.add(
      tf.gather(this.w(tokenParam), ids),
      positions.slice([0, 0], [L, positions.shape[1] as number]),
    );
  }

  causalMask(ids: tf.Tensor, _maxPositions: number): tf.Tensor {
    const L = ids.shape[1] as number;
    const m = new Float32Array(L * L);
    for (let i = 0; i < L; i++) for (let j = i + 1; j < L; j++) m[i * L + j] = LOWEST;
    return tf.tensor2d(m, [L, L]);
  }

  pickTokens(x: tf.Tensor, positions: tf.Tensor): tf.Tensor {
    // gatherND with [b, position] pairs: tfjs-backend-wasm's gather with batchDims reads wrong rows past the first.
    const batch = positions.shape[0] as number;
    return tf.gatherND(x, tf.stack([tf.range(0, batch, 1, 'int32'), positions.toInt()], 1));
  }

  add(a: tf.Tensor, b: tf.Tensor): tf.Tensor {
    return tf.add(a, b);
  }

  mul(a: tf.Tensor, b: tf.Tensor): tf.Tensor {
    return tf.mul(a, b);
  }

  scale(x: tf.Tensor, s: number): tf.Tensor {
    return tf.mul(x, s);
  }

  offset(x: tf.Tensor, s: number): tf.Tensor {
    return tf.add(x, s);
  }

  silu(x: tf.Tensor): tf.Tensor {
    return silu(x);
  }

  relu(x: tf.Tensor): tf.Tensor {
    return tf.relu(x);
  }

  tanh(x: tf.Tensor): tf.Tensor {
    return tf.tanh(x);
  }

  gelu(x: tf.Tensor): tf.Tensor {
    return gelu(x);
  }

  quickGelu(x: tf.Tensor): tf.Tensor {
    return quickGelu(x);
  }

  exp(x: tf.Tensor): tf.Tensor {
    return tf.exp(x);
  }

  clip(x: tf.Tensor, min: number, max: number): tf.Tensor {
    return tf.clipByValue(x, min, max);
  }

  attention(q: tf.Tensor, k: tf.Tensor, v: tf.Tensor, o: AttentionShape<tf.Tensor>): tf.Tensor {
    // Masked (causal) attention scales the queries first, as transformers' CLIP does.
    if (o.mask) return attention(tf.mul(q, o.scale), k, v, o.heads, 1, o.mask);
    return attention(q, k, v, o.heads, o.scale);
  }

  addPerChannel(image: tf.Tensor, vector: tf.Tensor): tf.Tensor {
    const [b, c] = vector.shape as number[];
    return tf.add(image, vector.reshape([b, 1, 1, c]));
  }

  toTokens(image: tf.Tensor): tf.Tensor {
    const [b, h, w, c] = image.shape as number[];
    return image.reshape([b, h * w, c]);
  }

  toImage(tokens: tf.Tensor, like: tf.Tensor): tf.Tensor {
    const [b, h, w] = like.shape as number[];
    return tokens.reshape([b, h, w, tokens.shape[2] as number]);
  }

  concatChannels(a: tf.Tensor, b: tf.Tensor): tf.Tensor {
    return tf.concat([a, b], 3);
  }

  concatLast(a: tf.Tensor, b: tf.Tensor): tf.Tensor {
    return tf.concat([a, b], -1);
  }

  splitLast(x: tf.Tensor, sizes: readonly number[]): tf.Tensor[] {
    return tf.split(x, [...sizes], -1);
  }

  splitChannels(x: tf.Tensor, sizes: readonly number[]): tf.Tensor[] {
    return tf.split(x, [...sizes], 3);
  }

  upsampleNearest(x: tf.Tensor, like?: tf.Tensor): tf.Tensor {
    const [b, h, wd, c] = x.shape as number[];
    const size = like ? [like.shape[1] as number, like.shape[2] as number] : [2 * h, 2 * wd];
    if (size[0] === 2 * h && size[1] === 2 * wd) {
      // Each pixel repeated 2×2: exact, no interpolation arithmetic. Two rank-4 tiles (columns, then
      // rows): tfjs-backend-webgpu runs rank ≥ 5 tiles on the CPU through a browser-only canvas.
      const cols = tf.tile(x.reshape([b * h, wd, 1, c]), [1, 1, 2, 1]).reshape([b * h, 1, 2 * wd, c]);
      return tf.tile(cols, [1, 2, 1, 1]).reshape([b, 2 * h, 2 * wd, c]);
    }
    return tf.image.resizeNearestNeighbor(x as tf.Tensor4D, [size[0], size[1]], false, false);
  }

  block(f: () => tf.Tensor): tf.Tensor {
    return tf.tidy(f);
  }
}
