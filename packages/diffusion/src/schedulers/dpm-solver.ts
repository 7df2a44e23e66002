import { ConfigError } from '@tiffin/core/internal';
import { add, copy, div, mul, sub } from '../latents/float32-math.js';
import type { HostTensor } from '../latents/host-tensor.js';
import { BaseScheduler, drawNoise, type HostStep } from './base.js';
import { oneOf, refuseUnsupported, SHARED_DEFAULTS } from './config.js';
import { defineScheduler, type SchedulerDefinition } from './definition.js';
import { sigmasFromAlphasCumprod } from './noise-schedule.js';
import { f32, interpIndex, roundHalfEven } from './numeric.js';
import { karrasSigmas, logSigmaTable, sigmaToT } from './sigmas.js';
import { dpmTimesteps } from './spacing.js';
import type { SchedulerConfig, SharedSchedulerConfig } from './types.js';

/** DPMSolverMultistepScheduler's config: the shared keys and its own. */
export type DPMSolverConfig = SharedSchedulerConfig & {
  solver_order: number;
  algorithm_type: 'dpmsolver++' | 'sde-dpmsolver++';
  solver_type: 'midpoint' | 'heun';
  lower_order_final: boolean;
  euler_at_final: boolean;
  use_karras_sigmas: boolean;
  final_sigmas_type: 'zero' | 'sigma_min';
};

export const DPM_SOLVER_DEFAULTS: DPMSolverConfig = {
  ...SHARED_DEFAULTS,
  timestep_spacing: 'linspace',
  solver_order: 2,
  algorithm_type: 'dpmsolver++',
  solver_type: 'midpoint',
  lower_order_final: true,
  euler_at_final: false,
  use_karras_sigmas: false,
  final_sigmas_type: 'zero',
};

/** `dpmpp_2m` (docs/spec/diffusion.md §7.7); listed in `registry.ts`. */
export const dpmSolverMultistep = defineScheduler({
  name: 'dpmpp_2m',
  className: 'DPMSolverMultistepScheduler',
  defaults: DPM_SOLVER_DEFAULTS,
  validate(resolved, given, className) {
    resolved.algorithm_type = oneOf(resolved.algorithm_type, ['dpmsolver++'], 'algorithm_type', className);
    validateDpmSolver(resolved, given, className);
  },
  create: (config) => new DPMSolverMultistepScheduler(config),
});

/** The checks of DPMSolverMultistepScheduler's own keys but `algorithm_type` (each name checks that itself). */
export function validateDpmSolver(
  resolved: DPMSolverConfig,
  given: SchedulerConfig,
  className: string,
): void {
  resolved.solver_type = oneOf(resolved.solver_type, ['midpoint', 'heun'], 'solver_type', className);
  resolved.final_sigmas_type = oneOf(
    resolved.final_sigmas_type,
    ['zero', 'sigma_min'],
    'final_sigmas_type',
    className,
  );
  if (![1, 2, 3].includes(resolved.solver_order)) {
    throw new ConfigError(
      `${className}: solver_order must be 1, 2 or 3, got ${JSON.stringify(resolved.solver_order)}`,
    );
  }
  refuseUnsupported(className, 'use_lu_lambdas', given.use_lu_lambdas, false);
  const lambdaMin = given.lambda_min_clipped;
  if (typeof lambdaMin === 'number' && Number.isFinite(lambdaMin)) {
    throw new ConfigError(`${className}: a finite lambda_min_clipped is not supported`);
  }
}

/**
 * Integer timesteps and float32 sigmas (N, then the final one: 0 or σ_0) of the multistep solvers, DPM++ and UniPC
 * (docs/spec/diffusion.md §7.7): the N + 1 spacing, the training sigmas at those timesteps, or Karras sigmas over
 * the full table (σ_{T-1} … σ_0, unlike Euler) with their rounded `sigma_to_t`.
 */
export function multistepSchedule(
  config: SharedSchedulerConfig & { use_karras_sigmas: boolean },
  alphasCumprod: Float32Array,
  n: number,
  finalSigma: 'zero' | 'sigma_min',
): { timesteps: number[]; sigmas: number[] } {
  let timesteps = dpmTimesteps(config, n);
  const table = sigmasFromAlphasCumprod(alphasCumprod);
  let sigmas: number[];
  if (config.use_karras_sigmas) {
    sigmas = karrasSigmas(table[table.length - 1], table[0], n);
    const logSigmas = logSigmaTable(table);
    timesteps = sigmas.map((s) => roundHalfEven(sigmaToT(s, logSigmas)));
  } else {
    sigmas = timesteps.map((t) => interpIndex(t, table));
  }
  const last = finalSigma === 'sigma_min' ? table[0] : 0;
  return { timesteps, sigmas: [...sigmas, last].map(f32) };
}

/** α, σ and λ of one noise level, each rounded to float32 as the reference's tensor maths is. */
export interface NoiseLevel {
  alpha: number;
  sigma: number;
  lambda: number;
}

export function noiseLevel(s: number): NoiseLevel {
  const alpha = f32(1 / f32(Math.sqrt(f32(f32(s * s) + 1))));
  const sigma = f32(s * alpha);
  // ln 0 = -Infinity gives λ = +Infinity at the final zero sigma; the update formulas stay finite.
  const lambda = f32(f32(Math.log(alpha)) - f32(Math.log(sigma)));
  return { alpha, sigma, lambda };
}

/** DPMSolverMultistepScheduler, algorithm dpmsolver++ (docs/spec/diffusion.md §7.7): 2M by default, 1 to 3 via solver_order. */
export class DPMSolverMultistepScheduler extends BaseScheduler<DPMSolverConfig> {
  private sigmas: number[] = [];
  /** Data predictions, newest last (own copies). */
  private modelOutputs: HostTensor[] = [];
  private lowerOrderNums = 0;

  /** The sigmas after `setTimesteps` (N values then the final sigma), float32 values. */
  get sigmaSchedule(): readonly number[] {
    return this.sigmas;
  }

  constructor(
    config?: SchedulerConfig,
    definition: SchedulerDefinition<string, DPMSolverConfig> = dpmSolverMultistep,
  ) {
    super(definition, config);
  }

  protected computeTimesteps(n: number): void {
    const { timesteps, sigmas } = multistepSchedule(
      this.config,
      this.alphasCumprod,
      n,
      this.config.final_sigmas_type,
    );
    this.sigmas = sigmas;
    this.timestepList = timesteps;
    this.initNoiseSigma = 1;
    this.lowerOrderNums = 0;
  }

  override dispose(): void {
    this.modelOutputs = [];
    this.lowerOrderNums = 0;
  }

  protected stepHost: HostStep = (modelOutput, timestep, sample, options = {}) => {
    this.requireTimesteps();
    const k = this.currentStepIndex(timestep);
    const M = this.timestepList.length;
    const cfg = this.config;
    const final =
      k === M - 1 &&
      (cfg.euler_at_final || (cfg.lower_order_final && M < 15) || cfg.final_sigmas_type === 'zero');
    const second = k === M - 2 && cfg.lower_order_final && M < 15;

    const current = noiseLevel(this.sigmas[k]);
    let x0: HostTensor;
    switch (cfg.prediction_type) {
      case 'epsilon':
        x0 = div(sub(sample, mul(modelOutput, current.sigma)), current.alpha);
        break;
      case 'v_prediction':
        x0 = sub(mul(sample, current.alpha), mul(modelOutput, current.sigma));
        break;
      case 'sample':
        x0 = copy(modelOutput);
        break;
    }
    this.modelOutputs.push(x0);
    while (this.modelOutputs.length > cfg.solver_order) this.modelOutputs.shift();

    let order: 1 | 2 | 3;
    if (cfg.solver_order === 1 || this.lowerOrderNums < 1 || final) order = 1;
    else if (cfg.solver_order === 2 || this.lowerOrderNums < 2 || second) order = 2;
    else order = 3;

    // The SDE algorithm draws at every step, the last included (its noise is then multiplied by σ = 0).
    const noise =
      cfg.algorithm_type === 'sde-dpmsolver++'
        ? drawNoise(options.noise, sample.shape, this.className)
        : null;
    const prevSample = noise ? this.sdeUpdate(order, k, sample, noise) : this.update(order, k, sample);
    if (this.lowerOrderNums < cfg.solver_order) this.lowerOrderNums += 1;
    this.stepIndex = k + 1;
    return prevSample;
  };

  /** The multistep update of the given order from sigma k to sigma k + 1. */
  private update(order: 1 | 2 | 3, k: number, sample: HostTensor): HostTensor {
    const outs = this.modelOutputs;
    const t = noiseLevel(this.sigmas[k + 1]);
    const s0 = noiseLevel(this.sigmas[k]);
    const h = f32(t.lambda - s0.lambda);
    const phi = f32(f32(Math.exp(-h)) - 1);
    const sampleCoeff = f32(t.sigma / s0.sigma);
    const alphaPhi = f32(t.alpha * phi);
    const m0 = outs[outs.length - 1];
    const base = sub(mul(sample, sampleCoeff), mul(m0, alphaPhi));
    if (order === 1) return base;

    const s1 = noiseLevel(this.sigmas[k - 1]);
    const h0 = f32(s0.lambda - s1.lambda);
    const r0 = f32(h0 / h);
    const m1 = outs[outs.length - 2];
    const d10 = mul(sub(m0, m1), f32(1 / r0));
    // (φ / h + 1): the heun and third-order coefficient of D1.
    const heunCoeff = f32(t.alpha * f32(f32(phi / h) + 1));
    if (order === 2) {
      if (this.config.solver_type === 'midpoint') return sub(base, mul(d10, f32(0.5 * alphaPhi)));
      return add(base, mul(d10, heunCoeff));
    }

    const s2 = noiseLevel(this.sigmas[k - 2]);
    const h1 = f32(s1.lambda - s2.lambda);
    const r1 = f32(h1 / h);
    const m2 = outs[outs.length - 3];
    const d11 = mul(sub(m1, m2), f32(1 / r1));
    const diff = sub(d10, d11);
    const d1 = add(d10, mul(diff, f32(r0 / f32(r0 + r1))));
    const d2 = mul(diff, f32(1 / f32(r0 + r1)));
    const d2Coeff = f32(t.alpha * f32(f32(f32(phi + h) / f32(h * h)) - 0.5));
    return sub(add(base, mul(d1, heunCoeff)), mul(d2, d2Coeff));
  }

  /**
   * sde-dpmsolver++ (DPM++ 2M SDE, docs/spec/diffusion.md §7.7): the update from sigma k to k + 1 with
   * `e^{-h}` in place of the deterministic weights and fresh noise times `σ(t)·sqrt(1 − e^{-2h})`; orders 1 and 2.
   */
  private sdeUpdate(order: 1 | 2 | 3, k: number, sample: HostTensor, noise: HostTensor): HostTensor {
    const outs = this.modelOutputs;
    const t = noiseLevel(this.sigmas[k + 1]);
    const s0 = noiseLevel(this.sigmas[k]);
    const h = f32(t.lambda - s0.lambda);
    const decay = f32(Math.exp(f32(-2 * h)));
    const sampleCoeff = f32(f32(t.sigma / s0.sigma) * f32(Math.exp(-h)));
    const dataCoeff = f32(t.alpha * f32(1 - decay));
    const noiseCoeff = f32(t.sigma * f32(Math.sqrt(f32(1 - decay))));
    const m0 = outs[outs.length - 1];
    const base = add(mul(sample, sampleCoeff), mul(m0, dataCoeff));
    if (order === 1) return add(base, mul(noise, noiseCoeff));
    const s1 = noiseLevel(this.sigmas[k - 1]);
    const r0 = f32(f32(s0.lambda - s1.lambda) / h);
    const d1 = mul(sub(m0, outs[outs.length - 2]), f32(1 / r0));
    const d1Coeff =
      this.config.solver_type === 'midpoint'
        ? f32(0.5 * dataCoeff)
        : f32(t.alpha * f32(f32(f32(1 - decay) / f32(-2 * h)) + 1));
    return add(add(base, mul(d1, d1Coeff)), mul(noise, noiseCoeff));
  }

  protected noised(original: HostTensor, noise: HostTensor, timestep: number): HostTensor {
    this.requireTimesteps();
    const index = this.noiseIndex(timestep);
    const level = noiseLevel(this.sigmas[index]);
    return add(mul(original, level.alpha), mul(noise, level.sigma));
  }
}
