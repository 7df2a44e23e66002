import { add, div, mul, sub } from '../latents/float32-math.js';
import type { HostTensor } from '../latents/host-tensor.js';
import { BaseScheduler, type HostStep } from './base.js';
import { oneOf, SHARED_DEFAULTS } from './config.js';
import { defineScheduler } from './definition.js';
import { sigmasFromAlphasCumprod } from './noise-schedule.js';
import { f32, interpIndex } from './numeric.js';
import { karrasSigmas, logSigmaTable, sigmaInitNoise, sigmaToT } from './sigmas.js';
import { eulerTimesteps } from './spacing.js';
import type { SchedulerConfig, SharedSchedulerConfig } from './types.js';

/** EulerDiscreteScheduler's config: the shared keys and its own. */
export type EulerConfig = SharedSchedulerConfig & {
  use_karras_sigmas: boolean;
  interpolation_type: 'linear';
  sigma_min: number | null;
  sigma_max: number | null;
};

const DEFAULTS: EulerConfig = {
  ...SHARED_DEFAULTS,
  timestep_spacing: 'linspace',
  use_karras_sigmas: false,
  interpolation_type: 'linear',
  sigma_min: null,
  sigma_max: null,
};

/** `euler` (docs/spec/diffusion.md §7.5); listed in `registry.ts`. */
export const euler = defineScheduler({
  name: 'euler',
  className: 'EulerDiscreteScheduler',
  defaults: DEFAULTS,
  validate(resolved, _given, className) {
    resolved.interpolation_type = oneOf(
      resolved.interpolation_type,
      ['linear'],
      'interpolation_type',
      className,
    );
  },
  create: (config) => new EulerDiscreteScheduler(config),
});

/**
 * Shared part of EulerDiscreteScheduler and EulerAncestralDiscreteScheduler: sigma schedule,
 * init noise sigma, input scaling, x0 prediction and add_noise (docs/spec/diffusion.md §7.5, 7.6, 7.9).
 */
export abstract class EulerFamilyScheduler<C extends SharedSchedulerConfig> extends BaseScheduler<C> {
  /** s_0..s_{N-1} then 0, float32 values. */
  protected sigmas: number[] = [];

  /** The sigmas after `setTimesteps` (N values then the final 0), float32 values. */
  get sigmaSchedule(): readonly number[] {
    return this.sigmas;
  }

  protected computeTimesteps(n: number): void {
    let timesteps = eulerTimesteps(this.config, n);
    const table = sigmasFromAlphasCumprod(this.alphasCumprod);
    // np.interp over the float32 table at each timestep (float64 result).
    let sigmas = timesteps.map((t) => interpIndex(t, table));
    const karras = this.karrasRange(sigmas);
    if (karras) {
      sigmas = karrasSigmas(karras.sigmaMax, karras.sigmaMin, n);
      const logSigmas = logSigmaTable(table);
      timesteps = sigmas.map((s) => f32(sigmaToT(s, logSigmas)));
    }
    this.timestepList = timesteps;
    this.sigmas = [...sigmas.map(f32), 0];
    this.initNoiseSigma = sigmaInitNoise(this.sigmas, this.config.timestep_spacing);
  }

  /** The Karras sigma range when the class uses Karras sigmas (given the interpolated sigmas), else null. */
  protected karrasRange(_sigmas: number[]): { sigmaMin: number; sigmaMax: number } | null {
    return null;
  }

  /** The sigma the UNet input is scaled for at step index `k` (a class with intermediate evaluations overrides it). */
  protected inputSigma(k: number): number {
    return this.sigmas[k];
  }

  protected override scaleInput(sample: HostTensor, timestep: number): HostTensor {
    this.requireTimesteps();
    const sigma = this.inputSigma(this.currentStepIndex(timestep));
    const divisor = f32(Math.sqrt(f32(f32(sigma * sigma) + 1)));
    return div(sample, divisor);
  }

  /** Denoised estimate x0 from the model output at noise level `sigma`. */
  protected predictOriginal(modelOutput: HostTensor, sample: HostTensor, sigma: number): HostTensor {
    switch (this.config.prediction_type) {
      case 'epsilon':
        return sub(sample, mul(modelOutput, sigma));
      case 'v_prediction': {
        const s2p1 = f32(f32(sigma * sigma) + 1);
        const c = f32(-sigma / f32(Math.sqrt(s2p1)));
        return add(mul(modelOutput, c), div(sample, s2p1));
      }
      case 'sample':
        return modelOutput;
    }
  }

  protected noised(original: HostTensor, noise: HostTensor, timestep: number): HostTensor {
    this.requireTimesteps();
    const index = this.noiseIndex(timestep);
    const sigma = this.sigmas[index];
    return add(original, mul(noise, sigma));
  }
}

/** EulerDiscreteScheduler (docs/spec/diffusion.md §7.5), deterministic (s_churn = 0). */
export class EulerDiscreteScheduler extends EulerFamilyScheduler<EulerConfig> {
  constructor(config?: SchedulerConfig) {
    super(euler, config);
  }

  protected override karrasRange(sigmas: number[]): { sigmaMin: number; sigmaMax: number } | null {
    if (!this.config.use_karras_sigmas) return null;
    return {
      sigmaMin: this.config.sigma_min ?? sigmas[sigmas.length - 1],
      sigmaMax: this.config.sigma_max ?? sigmas[0],
    };
  }

  protected stepHost: HostStep = (modelOutput, timestep, sample, _options) => {
    this.requireTimesteps();
    const k = this.currentStepIndex(timestep);
    const sigma = this.sigmas[k];
    const dt = f32(this.sigmas[k + 1] - sigma);
    const x0 = this.predictOriginal(modelOutput, sample, sigma);
    const derivative = div(sub(sample, x0), sigma);
    this.stepIndex = k + 1;
    return add(sample, mul(derivative, dt));
  };
}
