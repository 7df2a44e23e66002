import { InvalidArgument } from '@tiffin/core';
import { ConfigError } from '@tiffin/core/internal';
import { add, clip, div, mul, sub } from '../latents/float32-math.js';
import type { HostTensor } from '../latents/host-tensor.js';
import { BaseScheduler, drawNoise, type HostStep } from './base.js';
import { SHARED_DEFAULTS } from './config.js';
import { addNoiseByAlpha, alphaAt } from './ddim.js';
import { defineScheduler } from './definition.js';
import { f32 } from './numeric.js';
import type { SchedulerConfig, SharedSchedulerConfig } from './types.js';

/** LCMScheduler's config: the shared keys and its own. */
export type LCMConfig = SharedSchedulerConfig & {
  original_inference_steps: number;
  clip_sample: boolean;
  clip_sample_range: number;
  set_alpha_to_one: boolean;
  timestep_scaling: number;
};

/** diffusers 0.27.2 `LCMScheduler.__init__` defaults (SD's scaled-linear betas, unlike the other classes). */
const DEFAULTS: LCMConfig = {
  ...SHARED_DEFAULTS,
  beta_start: 0.00085,
  beta_end: 0.012,
  beta_schedule: 'scaled_linear',
  original_inference_steps: 50,
  clip_sample: false,
  clip_sample_range: 1,
  set_alpha_to_one: true,
  timestep_scaling: 10,
};

/**
 * `lcm`: the latent consistency model sampler (LCM and LCM-LoRA weights, 1–8 steps without guidance); listed in
 * `registry.ts`. As in diffusers 0.27, its timesteps come from `original_inference_steps` whatever
 * `timestep_spacing` says (the class reads that key but does not use it).
 */
export const lcm = defineScheduler({
  name: 'lcm',
  className: 'LCMScheduler',
  defaults: DEFAULTS,
  validate(resolved, _given, className) {
    const T = resolved.num_train_timesteps;
    const original = resolved.original_inference_steps;
    if (!Number.isInteger(original) || original < 1 || original > T) {
      throw new ConfigError(
        `${className}: original_inference_steps must be an integer in 1..${T}, got ${JSON.stringify(original)}`,
      );
    }
    if (!(typeof resolved.timestep_scaling === 'number' && Number.isFinite(resolved.timestep_scaling))) {
      throw new ConfigError(`${className}: timestep_scaling must be a finite number`);
    }
  },
  create: (config) => new LCMScheduler(config),
});

/** σ_data of the consistency boundary conditions (diffusers' fixed 0.5). */
const SIGMA_DATA = 0.5;

/**
 * LCMScheduler (diffusers 0.27.2): each step predicts x0, applies the consistency boundary conditions
 * (`c_skip · x + c_out · x0`), then re-noises to the next timestep with a fresh draw; the last step (and so a
 * one-step generation) returns the denoised sample without noise.
 */
export class LCMScheduler extends BaseScheduler<LCMConfig> {
  private readonly finalAlphaCumprod: number;

  constructor(config?: SchedulerConfig) {
    super(lcm, config);
    this.finalAlphaCumprod = this.config.set_alpha_to_one ? 1 : this.alphasCumprod[0];
  }

  /**
   * The distillation schedule `k·i − 1` (i = 1..original_inference_steps, k = T // original), descending, and
   * `numInferenceSteps` of its entries at indices ⌊j · len / N⌋.
   */
  protected computeTimesteps(n: number): void {
    const T = this.config.num_train_timesteps;
    const original = this.config.original_inference_steps;
    if (n > original) {
      throw new InvalidArgument(
        `num_inference_steps (${n}) cannot exceed the LCM scheduler's original_inference_steps (${original})`,
      );
    }
    const k = Math.floor(T / original);
    const origin = Array.from({ length: original }, (_, i) => (i + 1) * k - 1).reverse();
    const stride = origin.length / n;
    this.timestepList = Array.from({ length: n }, (_, j) => origin[Math.floor(j * stride)]);
  }

  /** `c_skip`, `c_out` at `timestep`, in float32 as the reference's tensor maths. */
  private boundaryScalings(timestep: number): { cSkip: number; cOut: number } {
    const scaled = f32(timestep * this.config.timestep_scaling);
    const denominator = f32(f32(scaled * scaled) + SIGMA_DATA ** 2);
    return {
      cSkip: f32(SIGMA_DATA ** 2 / denominator),
      cOut: f32(scaled / f32(Math.sqrt(denominator))),
    };
  }

  protected stepHost: HostStep = (modelOutput, timestep, sample, options = {}) => {
    this.requireTimesteps();
    const k = this.currentStepIndex(timestep);
    const last = k === (this.numInferenceSteps as number) - 1;
    const prev = k + 1 < this.timestepList.length ? this.timestepList[k + 1] : timestep;
    const aT = alphaAt(this.alphasCumprod, timestep, this.className);
    const aP = prev >= 0 ? alphaAt(this.alphasCumprod, prev, this.className) : this.finalAlphaCumprod;
    const sqrtAT = f32(Math.sqrt(aT));
    const sqrtBT = f32(Math.sqrt(f32(1 - aT)));
    let x0: HostTensor;
    switch (this.config.prediction_type) {
      case 'epsilon':
        x0 = div(sub(sample, mul(modelOutput, sqrtBT)), sqrtAT);
        break;
      case 'v_prediction':
        x0 = sub(mul(sample, sqrtAT), mul(modelOutput, sqrtBT));
        break;
      case 'sample':
        x0 = modelOutput;
        break;
    }
    if (this.config.clip_sample) {
      const r = this.config.clip_sample_range;
      x0 = clip(x0, -r, r);
    }
    const { cSkip, cOut } = this.boundaryScalings(timestep);
    const denoised = add(mul(x0, cOut), mul(sample, cSkip));
    this.stepIndex = k + 1;
    if (last) return denoised;
    const noise = drawNoise(options.noise, sample.shape, this.className);
    return add(mul(denoised, f32(Math.sqrt(aP))), mul(noise, f32(Math.sqrt(f32(1 - aP)))));
  };

  protected noised(original: HostTensor, noise: HostTensor, timestep: number): HostTensor {
    return addNoiseByAlpha(alphaAt(this.alphasCumprod, timestep, this.className), original, noise);
  }
}
