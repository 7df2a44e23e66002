import { add, clip, div, mul, sub } from '../latents/float32-math.js';
import type { HostTensor } from '../latents/host-tensor.js';
import { BaseScheduler, drawNoise, type HostStep } from './base.js';
import { SHARED_DEFAULTS } from './config.js';
import { defineScheduler } from './definition.js';
import { f32 } from './numeric.js';
import { integerTimestepsAscending } from './spacing.js';
import type { SchedulerConfig, SharedSchedulerConfig } from './types.js';

/** DDIMScheduler's config: the shared keys and its own. */
export type DDIMConfig = SharedSchedulerConfig & {
  set_alpha_to_one: boolean;
  clip_sample: boolean;
  clip_sample_range: number;
};

const DEFAULTS: DDIMConfig = {
  ...SHARED_DEFAULTS,
  set_alpha_to_one: true,
  clip_sample: true,
  clip_sample_range: 1,
};

/** `ddim` (docs/spec/diffusion.md §7.3); listed in `registry.ts`. */
export const ddim = defineScheduler({
  name: 'ddim',
  className: 'DDIMScheduler',
  defaults: DEFAULTS,
  create: (config) => new DDIMScheduler(config),
});

/** √ᾱ_t · x0 + √(1 - ᾱ_t) · ε with float32 coefficients (DDIM and PNDM, docs/spec/diffusion.md §7.9). */
export function addNoiseByAlpha(alphaProd: number, original: HostTensor, noise: HostTensor): HostTensor {
  const sqrtAlpha = f32(Math.sqrt(alphaProd));
  const sqrtOneMinus = f32(Math.sqrt(f32(1 - alphaProd)));
  return add(mul(original, sqrtAlpha), mul(noise, sqrtOneMinus));
}

/** ᾱ at an integer timestep, with a clear error outside the table. */
export function alphaAt(alphasCumprod: Float32Array, timestep: number, who: string): number {
  const value = alphasCumprod[timestep];
  if (!Number.isInteger(timestep) || value === undefined) {
    throw new Error(`${who}: timestep ${timestep} is outside 0..${alphasCumprod.length - 1}`);
  }
  return value;
}

/** DDIMScheduler (docs/spec/diffusion.md §7.3), deterministic for eta = 0, ancestral noise for eta > 0. */
export class DDIMScheduler extends BaseScheduler<DDIMConfig> {
  private readonly finalAlphaCumprod: number;

  constructor(config?: SchedulerConfig) {
    super(ddim, config);
    this.finalAlphaCumprod = this.config.set_alpha_to_one ? 1 : this.alphasCumprod[0];
  }

  protected computeTimesteps(n: number): void {
    this.timestepList = integerTimestepsAscending(this.config, n).reverse();
  }

  protected stepHost: HostStep = (modelOutput, timestep, sample, options = {}) => {
    this.requireTimesteps();
    const eta = options.eta ?? 0;
    const n = this.numInferenceSteps as number;
    const prev = timestep - Math.floor(this.config.num_train_timesteps / n);
    const aT = alphaAt(this.alphasCumprod, timestep, this.className);
    const aP = prev >= 0 ? this.alphasCumprod[prev] : this.finalAlphaCumprod;
    const bT = f32(1 - aT);
    const sqrtAT = f32(Math.sqrt(aT));
    const sqrtBT = f32(Math.sqrt(bT));
    const variance = f32(f32(f32(1 - aP) / bT) * f32(1 - f32(aT / aP)));
    const std = f32(eta * f32(Math.sqrt(variance)));
    const directionCoeff = f32(Math.sqrt(f32(f32(1 - aP) - f32(std * std))));
    const noise = eta > 0 ? drawNoise(options.noise, sample.shape, this.className) : null;
    let x0: HostTensor;
    let eps: HostTensor;
    switch (this.config.prediction_type) {
      case 'epsilon':
        x0 = div(sub(sample, mul(modelOutput, sqrtBT)), sqrtAT);
        eps = modelOutput;
        break;
      case 'v_prediction':
        x0 = sub(mul(sample, sqrtAT), mul(modelOutput, sqrtBT));
        eps = add(mul(modelOutput, sqrtAT), mul(sample, sqrtBT));
        break;
      case 'sample':
        x0 = modelOutput;
        eps = div(sub(sample, mul(x0, sqrtAT)), sqrtBT);
        break;
    }
    if (this.config.clip_sample) {
      const r = this.config.clip_sample_range;
      x0 = clip(x0, -r, r);
    }
    const out = add(mul(x0, f32(Math.sqrt(aP))), mul(eps, directionCoeff));
    return noise ? add(out, mul(noise, std)) : out;
  };

  protected noised(original: HostTensor, noise: HostTensor, timestep: number): HostTensor {
    return addNoiseByAlpha(alphaAt(this.alphasCumprod, timestep, this.className), original, noise);
  }
}
