import { add, copy, div, mul, sub } from '../latents/float32-math.js';
import type { HostTensor } from '../latents/host-tensor.js';
import type { HostStep } from './base.js';
import { SHARED_DEFAULTS } from './config.js';
import { defineScheduler } from './definition.js';
import { discreteSchedule, repeatAfterFirst } from './discrete-schedule.js';
import { EulerFamilyScheduler } from './euler.js';
import { f32 } from './numeric.js';
import { sigmaInitNoise, sigmaToT } from './sigmas.js';
import type { PredictionType, SchedulerConfig, SharedSchedulerConfig } from './types.js';

/** KDPM2DiscreteScheduler's and KDPM2AncestralDiscreteScheduler's config: the shared keys and Karras sigmas. */
export type KDPM2Config = SharedSchedulerConfig & { use_karras_sigmas: boolean };

export const KDPM2_DEFAULTS: KDPM2Config = {
  ...SHARED_DEFAULTS,
  beta_start: 0.00085,
  beta_end: 0.012,
  timestep_spacing: 'linspace',
  use_karras_sigmas: false,
};

/** diffusers 0.27.2 raises on `sample` prediction for KDPM2, KDPM2 ancestral and DPM++ SDE: refused at config time. */
export const NO_SAMPLE_PREDICTION: readonly PredictionType[] = ['epsilon', 'v_prediction'];

/** `kdpm2` (docs/spec/diffusion.md §7.10); listed in `registry.ts`. */
export const kdpm2 = defineScheduler({
  name: 'kdpm2',
  className: 'KDPM2DiscreteScheduler',
  defaults: KDPM2_DEFAULTS,
  predictionTypes: NO_SAMPLE_PREDICTION,
  create: (config) => new KDPM2DiscreteScheduler(config),
});

/**
 * `exp(lerp(ln a, ln b, 0.5))` in float32 as torch computes it (its lerp at weight 0.5: `b − (b − a)·0.5`): the
 * geometric mean of two sigmas, 0 when `a` is 0.
 */
export function logMidpoint(a: number, b: number): number {
  const la = f32(Math.log(a));
  const lb = f32(Math.log(b));
  return f32(Math.exp(f32(lb - f32(f32(lb - la) * 0.5))));
}

/** Timesteps of intermediate sigmas: `sigma_to_t`, stored float32 unless the timesteps are float64 (Karras). */
export function intermediateTimestep(sigma: number, logSigmas: Float32Array, karras: boolean): number {
  const t = sigmaToT(sigma, logSigmas);
  return karras ? t : f32(t);
}

/** `[…v, v[N]]` after {@link repeatAfterFirst}: the interleaved arrays of the KDPM2 classes (2N + 2 values). */
export function interleaveWithLast(values: readonly number[]): number[] {
  return [...repeatAfterFirst(values), values[values.length - 1]];
}

/**
 * KDPM2DiscreteScheduler (docs/spec/diffusion.md §7.10): DPM-Solver-2, an Euler step to the log-midpoint of two
 * sigmas, the model there, and the step from the saved sample with that slope. Timesteps `t_0, t½_1, t_1, …,
 * t½_{N-1}, t_{N-1}` (2N − 1 model calls; the last is an Euler step to 0), order 2.
 */
export class KDPM2DiscreteScheduler extends EulerFamilyScheduler<KDPM2Config> {
  override readonly order: number = 2;
  private sigmasInterpol: number[] = [];
  private saved: HostTensor | null = null;

  constructor(config?: SchedulerConfig) {
    super(kdpm2, config);
  }

  protected override computeTimesteps(n: number): void {
    const karras = this.config.use_karras_sigmas;
    const { timesteps, sigmas, logSigmas } = discreteSchedule(this.config, this.alphasCumprod, n, {
      useKarrasSigmas: karras,
      roundKarrasTimesteps: true,
    });
    // Each sigma's log-midpoint with the one before (the first's is unused).
    const interpol = sigmas.map((s, k) => (k === 0 ? Number.NaN : logMidpoint(s, sigmas[k - 1])));
    this.sigmas = interleaveWithLast(sigmas);
    this.sigmasInterpol = interleaveWithLast(interpol);
    const list = [timesteps[0]];
    for (let k = 1; k < n; k++) list.push(intermediateTimestep(interpol[k], logSigmas, karras), timesteps[k]);
    this.timestepList = list;
    this.initNoiseSigma = sigmaInitNoise(this.sigmas, this.config.timestep_spacing);
  }

  override dispose(): void {
    this.saved = null;
  }

  protected override inputSigma(k: number): number {
    return this.saved === null ? this.sigmas[k] : this.sigmasInterpol[k];
  }

  protected stepHost: HostStep = (modelOutput, timestep, sample, _options) => {
    this.requireTimesteps();
    const k = this.currentStepIndex(timestep);
    this.stepIndex = k + 1;
    if (this.saved === null) {
      const sigma = this.sigmas[k];
      const x0 = this.predictOriginal(modelOutput, sample, sigma);
      this.saved = copy(sample);
      const dt = f32(this.sigmasInterpol[k + 1] - sigma);
      return add(sample, mul(div(sub(sample, x0), sigma), dt));
    }
    const sigmaInterpol = this.sigmasInterpol[k];
    const x0 = this.predictOriginal(modelOutput, sample, sigmaInterpol);
    const derivative = div(sub(sample, x0), sigmaInterpol);
    const dt = f32(this.sigmas[k] - this.sigmas[k - 1]);
    const next = add(this.saved, mul(derivative, dt));
    this.saved = null;
    return next;
  };
}
