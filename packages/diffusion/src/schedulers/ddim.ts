import * as tf from '@tensorflow/tfjs';
import { BaseScheduler, drawNoise } from './base.js';
import { SHARED_DEFAULTS } from './config.js';
import { defineScheduler } from './definition.js';
import { f32 } from './numeric.js';
import { integerTimestepsAscending } from './spacing.js';
import type { SchedulerConfig, SharedSchedulerConfig, StepOptions, StepResult } from './types.js';

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
export function addNoiseByAlpha(alphaProd: number, original: tf.Tensor, noise: tf.Tensor): tf.Tensor {
  const sqrtAlpha = f32(Math.sqrt(alphaProd));
  const sqrtOneMinus = f32(Math.sqrt(f32(1 - alphaProd)));
  return tf.tidy(() => tf.add(tf.mul(original, sqrtAlpha), tf.mul(noise, sqrtOneMinus)));
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

  step(modelOutput: tf.Tensor, timestep: number, sample: tf.Tensor, options: StepOptions = {}): StepResult {
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
    const prevSample = tf.tidy(() => {
      let x0: tf.Tensor;
      let eps: tf.Tensor;
      switch (this.config.prediction_type) {
        case 'epsilon':
          x0 = tf.div(tf.sub(sample, tf.mul(modelOutput, sqrtBT)), sqrtAT);
          eps = modelOutput;
          break;
        case 'v_prediction':
          x0 = tf.sub(tf.mul(sample, sqrtAT), tf.mul(modelOutput, sqrtBT));
          eps = tf.add(tf.mul(modelOutput, sqrtAT), tf.mul(sample, sqrtBT));
          break;
        case 'sample':
          x0 = modelOutput;
          eps = tf.div(tf.sub(sample, tf.mul(x0, sqrtAT)), sqrtBT);
          break;
      }
      if (this.config.clip_sample) {
        const r = this.config.clip_sample_range;
        x0 = tf.clipByValue(x0, -r, r);
      }
      let out = tf.add(tf.mul(x0, f32(Math.sqrt(aP))), tf.mul(eps, directionCoeff));
      if (noise) out = tf.add(out, tf.mul(noise, std));
      return out;
    });
    noise?.dispose();
    return { prevSample };
  }

  addNoise(original: tf.Tensor, noise: tf.Tensor, timestep: number): tf.Tensor {
    return addNoiseByAlpha(alphaAt(this.alphasCumprod, timestep, this.className), original, noise);
  }
}
