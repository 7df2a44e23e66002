import type * as tf from '@tensorflow/tfjs';
import { tfjs } from '../latents/tfjs-interop.js';
import type { ResolvedLoraModule } from './types.js';

/**
 * `reshape(up.reshape(out, r) @ down.reshape(r, in·kh·kw), W.shape)` in float32 (docs/spec/diffusion.md §9.3), without
 * the alpha/rank and request scale (applied by the caller). Covers Linear, 1×1 and k×k convs.
 * The caller owns the returned tensor. Only targets whose weights are TF.js tensors take a dense delta, so TF.js
 * is loaded here and nowhere on the onnxruntime engine's path.
 */
export function loraDelta(resolved: ResolvedLoraModule, weightShape: readonly number[]): tf.Tensor {
  const tf = tfjs();
  const { up, down } = resolved.module;
  const r = resolved.rank;
  return tf.tidy(() => {
    const up2 = tf.tensor2d(up.data, [up.shape[0], r]);
    const down2 = tf.tensor2d(down.data, [r, down.data.length / r]);
    return tf.reshape(tf.matMul(up2, down2), [...weightShape]);
  });
}
