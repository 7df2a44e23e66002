import { add, div, mul, sub } from '../latents/float32-math.js';
import type { HostTensor } from '../latents/host-tensor.js';
import type { HostStep } from './base.js';
import { SHARED_DEFAULTS } from './config.js';
import { defineScheduler } from './definition.js';
import { discreteSchedule } from './discrete-schedule.js';
import { EulerFamilyScheduler } from './euler.js';
import { sigmaInitNoise } from './sigmas.js';
import type { SchedulerConfig, SharedSchedulerConfig } from './types.js';

/** LMSDiscreteScheduler's config: the shared keys and Karras sigmas. */
export type LMSConfig = SharedSchedulerConfig & { use_karras_sigmas: boolean };

const DEFAULTS: LMSConfig = { ...SHARED_DEFAULTS, timestep_spacing: 'linspace', use_karras_sigmas: false };

/** diffusers' `step(order=4)`: how many past slopes the linear multistep method combines. */
const LMS_ORDER = 4;

/** `lms` (docs/spec/diffusion.md §7.10); listed in `registry.ts`. */
export const lms = defineScheduler({
  name: 'lms',
  className: 'LMSDiscreteScheduler',
  defaults: DEFAULTS,
  create: (config) => new LMSDiscreteScheduler(config),
});

/** 4-point Gauss–Legendre nodes and weights on [-1, 1]: exact for the cubic (at most) Lagrange basis polynomials. */
const GAUSS_NODES = [-0.8611363115940526, -0.3399810435848563, 0.3399810435848563, 0.8611363115940526];
const GAUSS_WEIGHTS = [0.3478548451374538, 0.6521451548625461, 0.6521451548625461, 0.3478548451374538];

/**
 * LMSDiscreteScheduler (docs/spec/diffusion.md §7.10): the Euler family's sigmas and input scaling, and a linear
 * multistep step combining the last (up to) four slopes, each weighted by the integral over [σ_k, σ_{k+1}] of its
 * Lagrange basis polynomial in σ (diffusers integrates it numerically with scipy's `quad`; the integral is exact here).
 */
export class LMSDiscreteScheduler extends EulerFamilyScheduler<LMSConfig> {
  /** Slopes, newest last (own tensors). */
  private derivatives: HostTensor[] = [];

  constructor(config?: SchedulerConfig) {
    super(lms, config);
  }

  protected override computeTimesteps(n: number): void {
    const { timesteps, sigmas } = discreteSchedule(this.config, this.alphasCumprod, n, {
      useKarrasSigmas: this.config.use_karras_sigmas,
    });
    this.sigmas = sigmas;
    this.timestepList = timesteps;
    this.initNoiseSigma = sigmaInitNoise(sigmas, this.config.timestep_spacing);
  }

  override dispose(): void {
    this.derivatives = [];
  }

  /** ∫ over [σ_t, σ_{t+1}] of the Lagrange basis polynomial of node `t − current` among nodes σ_t … σ_{t−order+1}. */
  private coefficient(order: number, t: number, current: number): number {
    const s = this.sigmas;
    const basis = (tau: number) => {
      let prod = 1;
      for (let k = 0; k < order; k++) {
        if (k !== current) prod *= (tau - s[t - k]) / (s[t - current] - s[t - k]);
      }
      return prod;
    };
    const a = s[t];
    const b = s[t + 1];
    const half = (b - a) / 2;
    const mid = (a + b) / 2;
    let sum = 0;
    for (let i = 0; i < GAUSS_NODES.length; i++) sum += GAUSS_WEIGHTS[i] * basis(mid + half * GAUSS_NODES[i]);
    return sum * half;
  }

  protected stepHost: HostStep = (modelOutput, timestep, sample, _options) => {
    this.requireTimesteps();
    const k = this.currentStepIndex(timestep);
    const sigma = this.sigmas[k];
    const x0 = this.predictOriginal(modelOutput, sample, sigma);
    this.derivatives.push(div(sub(sample, x0), sigma));
    if (this.derivatives.length > LMS_ORDER) this.derivatives.shift();
    const order = Math.min(k + 1, LMS_ORDER);
    // diffusers zips the coefficients with the slopes kept so far (fewer after an img2img start).
    const used = Math.min(order, this.derivatives.length);
    let sum: HostTensor | null = null;
    for (let j = 0; j < used; j++) {
      const term = mul(this.derivatives[this.derivatives.length - 1 - j], this.coefficient(order, k, j));
      sum = sum === null ? term : add(sum, term);
    }
    this.stepIndex = k + 1;
    return add(sample, sum as HostTensor);
  };
}
