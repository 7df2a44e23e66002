import { add, copy, div, mul, sub } from '../latents/float32-math.js';
import type { HostTensor } from '../latents/host-tensor.js';
import { drawNoise, type HostStep } from './base.js';
import { defineScheduler } from './definition.js';
import { discreteSchedule } from './discrete-schedule.js';
import { EulerFamilyScheduler } from './euler.js';
import {
  interleaveWithLast,
  intermediateTimestep,
  KDPM2_DEFAULTS,
  type KDPM2Config,
  logMidpoint,
  NO_SAMPLE_PREDICTION,
} from './kdpm2.js';
import { f32 } from './numeric.js';
import { sigmaInitNoise } from './sigmas.js';
import type { SchedulerConfig } from './types.js';

/** `kdpm2_a` (docs/spec/diffusion.md §7.10); listed in `registry.ts`. */
export const kdpm2Ancestral = defineScheduler({
  name: 'kdpm2_a',
  className: 'KDPM2AncestralDiscreteScheduler',
  defaults: KDPM2_DEFAULTS,
  predictionTypes: NO_SAMPLE_PREDICTION,
  create: (config) => new KDPM2AncestralDiscreteScheduler(config),
});

/** `sqrt(x)` of a float32 value, stored float32. */
const sqrt32 = (x: number) => f32(Math.sqrt(x));

/**
 * KDPM2AncestralDiscreteScheduler (docs/spec/diffusion.md §7.10): DPM-Solver-2 to the ancestral step's σ_down, then
 * fresh noise times σ_up. Timesteps `t_0, t½_0, t_1, …, t½_{N-2}, t_{N-1}`, order 2. Like diffusers it draws noise at
 * every call (only the second call of a pair adds it), so a given noise source sees diffusers' draw order.
 */
export class KDPM2AncestralDiscreteScheduler extends EulerFamilyScheduler<KDPM2Config> {
  override readonly order: number = 2;
  private sigmasInterpol: number[] = [];
  private sigmasUp: number[] = [];
  private sigmasDown: number[] = [];
  private saved: HostTensor | null = null;

  constructor(config?: SchedulerConfig) {
    super(kdpm2Ancestral, config);
  }

  protected override computeTimesteps(n: number): void {
    const karras = this.config.use_karras_sigmas;
    const { timesteps, sigmas, logSigmas } = discreteSchedule(this.config, this.alphasCumprod, n, {
      useKarrasSigmas: karras,
      roundKarrasTimesteps: true,
    });
    const up: number[] = [];
    const down: number[] = [];
    sigmas.forEach((s, k) => {
      const next = k + 1 < sigmas.length ? sigmas[k + 1] : 0;
      const s2 = f32(s * s);
      const n2 = f32(next * next);
      const u = sqrt32(f32(f32(n2 * f32(s2 - n2)) / s2));
      up.push(u);
      down.push(k === n ? 0 : sqrt32(f32(n2 - f32(u * u))));
    });
    // The last two log-midpoints are set to 0 (the final Euler step to 0 and the unused end).
    const interpol = sigmas.map((s, k) => (k >= n - 1 ? 0 : logMidpoint(s, down[k])));
    this.sigmas = interleaveWithLast(sigmas);
    this.sigmasInterpol = interleaveWithLast(interpol);
    this.sigmasUp = interleaveWithLast(up);
    this.sigmasDown = interleaveWithLast(down);
    const list = [timesteps[0]];
    for (let k = 1; k < n; k++)
      list.push(intermediateTimestep(interpol[k - 1], logSigmas, karras), timesteps[k]);
    this.timestepList = list;
    this.initNoiseSigma = sigmaInitNoise(this.sigmas, this.config.timestep_spacing);
  }

  override dispose(): void {
    this.saved = null;
  }

  protected override inputSigma(k: number): number {
    return this.saved === null ? this.sigmas[k] : this.sigmasInterpol[k - 1];
  }

  protected stepHost: HostStep = (modelOutput, timestep, sample, options = {}) => {
    this.requireTimesteps();
    const k = this.currentStepIndex(timestep);
    const noise = drawNoise(options.noise, sample.shape, this.className);
    this.stepIndex = k + 1;
    if (this.saved === null) {
      const sigma = this.sigmas[k];
      const x0 = this.predictOriginal(modelOutput, sample, sigma);
      this.saved = copy(sample);
      const dt = f32(this.sigmasInterpol[k] - sigma);
      return add(sample, mul(div(sub(sample, x0), sigma), dt));
    }
    const sigmaInterpol = this.sigmasInterpol[k - 1];
    const x0 = this.predictOriginal(modelOutput, sample, sigmaInterpol);
    const derivative = div(sub(sample, x0), sigmaInterpol);
    const dt = f32(this.sigmasDown[k - 1] - this.sigmas[k - 1]);
    const next = add(add(this.saved, mul(derivative, dt)), mul(noise, this.sigmasUp[k - 1]));
    this.saved = null;
    return next;
  };
}
