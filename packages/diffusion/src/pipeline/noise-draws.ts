import * as tf from '@tensorflow/tfjs';
import { GaussianNoise, type NoiseSource } from '../schedulers/index.js';
import type { InjectedNoise, NoisePurpose } from './types.js';

const NCHW_TO_NHWC = [0, 2, 3, 1];

/** A generation's noise: seeded draws (or injected ones), in NCHW C order (diffusers), as NHWC tensors. */
export class NoiseDraws {
  private readonly seeded: GaussianNoise;
  constructor(
    seed: number,
    private readonly injected: InjectedNoise | undefined,
  ) {
    this.seeded = new GaussianNoise(seed);
  }

  /** `nhwc` shape [B, H, W, C] → tensor of draws made for NCHW [B, C, H, W]. */
  draw(purpose: NoisePurpose, nhwc: readonly number[]): tf.Tensor4D {
    const [b, h, w, c] = nhwc;
    const nchw = [b, c, h, w];
    const data = this.injected ? this.injected(purpose, nchw) : this.seeded.fill(b * c * h * w);
    if (data.length !== b * c * h * w)
      throw new Error(`noise source returned ${data.length} values for shape [${nchw}]`);
    return tf.tidy(() =>
      tf.tensor4d(data, nchw as [number, number, number, number]).transpose(NCHW_TO_NHWC),
    ) as tf.Tensor4D;
  }

  /** The source the scheduler draws its per-step noise from (DDIM with η > 0, Euler A). */
  schedulerSource(): NoiseSource {
    return (shape) => this.draw('scheduler', shape);
  }
}
