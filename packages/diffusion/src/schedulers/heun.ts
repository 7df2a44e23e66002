import { add, clip, copy, div, mul, sub } from '../latents/float32-math.js';
import type { HostTensor } from '../latents/host-tensor.js';
import type { HostStep } from './base.js';
import { SHARED_DEFAULTS } from './config.js';
import { defineScheduler } from './definition.js';
import { discreteSchedule, repeatAfterFirst } from './discrete-schedule.js';
import { EulerFamilyScheduler } from './euler.js';
import { f32 } from './numeric.js';
import { sigmaInitNoise } from './sigmas.js';
import type { SchedulerConfig, SharedSchedulerConfig } from './types.js';

/** HeunDiscreteScheduler's config: the shared keys and its own. */
export type HeunConfig = SharedSchedulerConfig & {
  use_karras_sigmas: boolean;
  clip_sample: boolean;
  clip_sample_range: number;
};

const DEFAULTS: HeunConfig = {
  ...SHARED_DEFAULTS,
  beta_start: 0.00085,
  beta_end: 0.012,
  timestep_spacing: 'linspace',
  use_karras_sigmas: false,
  clip_sample: false,
  clip_sample_range: 1,
};

/** `heun` (docs/spec/diffusion.md §7.10); listed in `registry.ts`. */
export const heun = defineScheduler({
  name: 'heun',
  className: 'HeunDiscreteScheduler',
  defaults: DEFAULTS,
  create: (config) => new HeunDiscreteScheduler(config),
});

/**
 * HeunDiscreteScheduler (docs/spec/diffusion.md §7.10): an Euler step to the next sigma, then the model again there
 * and the average of the two slopes from the saved sample. Timesteps `t_0, t_1, t_1, …, t_{N-1}, t_{N-1}` (2N − 1
 * model calls; the last is an Euler step to 0), order 2.
 */
export class HeunDiscreteScheduler extends EulerFamilyScheduler<HeunConfig> {
  override readonly order: number = 2;
  private prevDerivative: HostTensor | null = null;
  private dt: number | null = null;
  private saved: HostTensor | null = null;

  constructor(config?: SchedulerConfig) {
    super(heun, config);
  }

  protected override computeTimesteps(n: number): void {
    const { timesteps, sigmas } = discreteSchedule(this.config, this.alphasCumprod, n, {
      useKarrasSigmas: this.config.use_karras_sigmas,
    });
    this.sigmas = [...repeatAfterFirst(sigmas.slice(0, -1)), 0];
    this.timestepList = repeatAfterFirst(timesteps);
    this.initNoiseSigma = sigmaInitNoise(this.sigmas, this.config.timestep_spacing);
  }

  override dispose(): void {
    this.prevDerivative = null;
    this.dt = null;
    this.saved = null;
  }

  protected stepHost: HostStep = (modelOutput, timestep, sample, _options) => {
    this.requireTimesteps();
    const k = this.currentStepIndex(timestep);
    const first = this.dt === null;
    const sigma = first ? this.sigmas[k] : this.sigmas[k - 1];
    const sigmaNext = first ? this.sigmas[k + 1] : this.sigmas[k];
    let x0 = this.predictOriginal(modelOutput, sample, first ? sigma : sigmaNext);
    if (this.config.clip_sample) {
      const range = this.config.clip_sample_range;
      x0 = clip(x0, -range, range);
    }
    this.stepIndex = k + 1;
    if (first) {
      const derivative = div(sub(sample, x0), sigma);
      const dt = f32(sigmaNext - sigma);
      this.prevDerivative = derivative;
      this.dt = dt;
      this.saved = copy(sample);
      return add(sample, mul(derivative, dt));
    }
    const derivative = mul(add(this.prevDerivative as HostTensor, div(sub(sample, x0), sigmaNext)), 0.5);
    const next = add(this.saved as HostTensor, mul(derivative, this.dt as number));
    this.dispose();
    return next;
  };
}
