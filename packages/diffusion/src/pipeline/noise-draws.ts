import { type HostTensor, NCHW_TO_NHWC, transpose } from '../latents/host-tensor.js';
import { BrownianTree } from '../schedulers/brownian-tree.js';
import { GaussianNoise } from '../schedulers/gaussian-noise.js';
import type { BrownianNoise, NoiseSource } from '../schedulers/types.js';
import type { InjectedNoise, NoisePurpose } from './types.js';

/** The seed of image `k` of a request seeded `seed` (A1111's convention), within 32 bits. */
export function imageSeed(seed: number, k: number): number {
  return (seed + k) % 2 ** 32;
}

/**
 * A generation's noise: seeded draws (or injected ones), in NCHW C order (diffusers), as NHWC host tensors.
 * Image k of a batch draws from its own source seeded `seed + k`, so any image of a multi-image request
 * is the image a one-image request with that seed gives.
 */
export class NoiseDraws {
  private readonly sources: GaussianNoise[] = [];
  constructor(
    private readonly seed: number,
    private readonly injected: InjectedNoise | undefined,
  ) {}

  private source(k: number): GaussianNoise {
    this.sources[k] ??= new GaussianNoise(imageSeed(this.seed, k));
    return this.sources[k];
  }

  /** `nhwc` shape [B, H, W, C] → tensor of draws made for NCHW [B, C, H, W]. */
  draw(purpose: NoisePurpose, nhwc: readonly number[]): HostTensor {
    const [b, h, w, c] = nhwc;
    const nchw = [b, c, h, w];
    const data = this.injected ? this.injected(purpose, nchw) : this.seededDraws(b, c * h * w);
    if (data.length !== b * c * h * w)
      throw new Error(`noise source returned ${data.length} values for shape [${nchw}]`);
    return transpose({ data, shape: nchw }, NCHW_TO_NHWC);
  }

  /** `perImage` draws from each image's source, image after image (batch-major, as NCHW is). */
  private seededDraws(batch: number, perImage: number): Float32Array {
    if (batch === 1) return this.source(0).fill(perImage);
    const out = new Float32Array(batch * perImage);
    for (let k = 0; k < batch; k++) out.set(this.source(k).fill(perImage), k * perImage);
    return out;
  }

  /**
   * DPM++ SDE's Brownian noise (docs/spec/diffusion.md §7.10): one tree per image, seeded by the image's seed, over
   * the sample's values of that image. None with injected noise: the scheduler then draws from `schedulerSource`.
   */
  brownianSource(): BrownianNoise | undefined {
    if (this.injected) return undefined;
    return (shape, sigmaMin, sigmaMax) => {
      const batch = shape[0];
      const per = shape.slice(1).reduce((a, b) => a * b, 1);
      const trees = Array.from(
        { length: batch },
        (_, k) => new BrownianTree(`brownian/${imageSeed(this.seed, k)}`, sigmaMin, sigmaMax, per),
      );
      return (from, to) => {
        const data = new Float32Array(batch * per);
        for (let k = 0; k < batch; k++) data.set(trees[k].increment(from, to), k * per);
        return { data, shape };
      };
    };
  }

  /** The source the scheduler draws its per-step noise from (DDIM with η > 0, Euler A). */
  schedulerSource(): NoiseSource {
    return (shape) => this.draw('scheduler', shape);
  }
}
