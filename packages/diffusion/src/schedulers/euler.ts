import * as tf from '@tensorflow/tfjs';
import { BaseScheduler } from './base.js';
import { sigmasFromAlphasCumprod } from './noise-schedule.js';
import { f32, interpIndex } from './numeric.js';
import { karrasSigmas, logSigmaTable, sigmaToT } from './sigmas.js';
import { eulerTimesteps } from './spacing.js';
import type { SchedulerConfig, SchedulerName, StepOptions, StepResult } from './types.js';

/**
 * Shared part of EulerDiscreteScheduler and EulerAncestralDiscreteScheduler: sigma schedule,
 * init noise sigma, input scaling, x0 prediction and add_noise (spec 7.5, 7.6, 7.9).
 */
export abstract class EulerFamilyScheduler extends BaseScheduler {
  /** s_0..s_{N-1} then 0, float32 values. */
  protected sigmas: number[] = [];

  /** The sigmas after `setTimesteps` (N values then the final 0), float32 values. */
  get sigmaSchedule(): readonly number[] {
    return this.sigmas;
  }

  constructor(name: SchedulerName, className: string, config: SchedulerConfig | undefined) {
    super(name, className, config);
  }

  protected computeTimesteps(n: number): void {
    let timesteps = eulerTimesteps(this.config, n);
    const table = sigmasFromAlphasCumprod(this.alphasCumprod);
    // np.interp over the float32 table at each timestep (float64 result).
    let sigmas = timesteps.map((t) => interpIndex(t, table));
    if (this.name === 'euler' && this.config.use_karras_sigmas) {
      const sigmaMin = this.config.sigma_min ?? sigmas[sigmas.length - 1];
      const sigmaMax = this.config.sigma_max ?? sigmas[0];
      sigmas = karrasSigmas(sigmaMax, sigmaMin, n);
      const logSigmas = logSigmaTable(table);
      timesteps = sigmas.map((s) => f32(sigmaToT(s, logSigmas)));
    }
    this.timestepList = timesteps;
    this.sigmas = [...sigmas.map(f32), 0];
    const maxSigma = Math.max(...this.sigmas);
    const spacing = this.config.timestep_spacing;
    this.initNoiseSigma =
      spacing === 'linspace' || spacing === 'trailing'
        ? maxSigma
        : f32(Math.sqrt(f32(f32(maxSigma * maxSigma) + 1)));
  }

  override scaleModelInput(sample: tf.Tensor, timestep: number): tf.Tensor {
    this.requireTimesteps();
    const sigma = this.sigmas[this.currentStepIndex(timestep)];
    const divisor = f32(Math.sqrt(f32(f32(sigma * sigma) + 1)));
    return tf.tidy(() => tf.div(sample, divisor));
  }

  /** Denoised estimate x0 from the model output at noise level `sigma`. */
  protected predictOriginal(modelOutput: tf.Tensor, sample: tf.Tensor, sigma: number): tf.Tensor {
    switch (this.config.prediction_type) {
      case 'epsilon':
        return tf.sub(sample, tf.mul(modelOutput, sigma));
      case 'v_prediction': {
        const s2p1 = f32(f32(sigma * sigma) + 1);
        const c = f32(-sigma / f32(Math.sqrt(s2p1)));
        return tf.add(tf.mul(modelOutput, c), tf.div(sample, s2p1));
      }
      case 'sample':
        return modelOutput;
    }
  }

  addNoise(original: tf.Tensor, noise: tf.Tensor, timestep: number): tf.Tensor {
    this.requireTimesteps();
    const index = this.beginIndex ?? this.indexForTimestep(timestep);
    const sigma = this.sigmas[index];
    return tf.tidy(() => tf.add(original, tf.mul(noise, sigma)));
  }

  abstract override step(
    modelOutput: tf.Tensor,
    timestep: number,
    sample: tf.Tensor,
    options?: StepOptions,
  ): StepResult;
}

/** EulerDiscreteScheduler (spec 7.5), deterministic (s_churn = 0). */
export class EulerDiscreteScheduler extends EulerFamilyScheduler {
  constructor(config?: SchedulerConfig) {
    super('euler', 'EulerDiscreteScheduler', config);
  }

  step(modelOutput: tf.Tensor, timestep: number, sample: tf.Tensor, _options?: StepOptions): StepResult {
    this.requireTimesteps();
    const k = this.currentStepIndex(timestep);
    const sigma = this.sigmas[k];
    const dt = f32(this.sigmas[k + 1] - sigma);
    const prevSample = tf.tidy(() => {
      const x0 = this.predictOriginal(modelOutput, sample, sigma);
      const derivative = tf.div(tf.sub(sample, x0), sigma);
      return tf.add(sample, tf.mul(derivative, dt));
    });
    this.stepIndex = k + 1;
    return { prevSample };
  }
}
