import { ConfigError } from '@tiffin/core/internal';
import { add, copy, div, mul, sub } from '../latents/float32-math.js';
import type { HostTensor } from '../latents/host-tensor.js';
import { BaseScheduler, type HostStep } from './base.js';
import { oneOf, refuseUnsupported, SHARED_DEFAULTS } from './config.js';
import { defineScheduler } from './definition.js';
import { multistepSchedule, type NoiseLevel, noiseLevel } from './dpm-solver.js';
import { f32 } from './numeric.js';
import type { SchedulerConfig, SharedSchedulerConfig } from './types.js';

/** UniPCMultistepScheduler's config: the shared keys and its own. */
export type UniPCConfig = SharedSchedulerConfig & {
  solver_order: number;
  predict_x0: boolean;
  solver_type: 'bh1' | 'bh2';
  lower_order_final: boolean;
  disable_corrector: number[];
  use_karras_sigmas: boolean;
};

const DEFAULTS: UniPCConfig = {
  ...SHARED_DEFAULTS,
  timestep_spacing: 'linspace',
  solver_order: 2,
  predict_x0: true,
  solver_type: 'bh2',
  lower_order_final: true,
  disable_corrector: [],
  use_karras_sigmas: false,
};

/** `unipc` (docs/spec/diffusion.md §7.11); listed in `registry.ts`. */
export const uniPC = defineScheduler({
  name: 'unipc',
  className: 'UniPCMultistepScheduler',
  defaults: DEFAULTS,
  validate(resolved, given, className) {
    // diffusers maps the DPM-Solver names to bh2.
    if (['midpoint', 'heun', 'logrho'].includes(resolved.solver_type)) resolved.solver_type = 'bh2';
    resolved.solver_type = oneOf(resolved.solver_type, ['bh1', 'bh2'], 'solver_type', className);
    if (![1, 2, 3].includes(resolved.solver_order)) {
      throw new ConfigError(
        `${className}: solver_order must be 1, 2 or 3, got ${JSON.stringify(resolved.solver_order)}`,
      );
    }
    const off = resolved.disable_corrector;
    if (!Array.isArray(off) || off.length > 1000 || off.some((i) => !Number.isInteger(i))) {
      throw new ConfigError(`${className}: disable_corrector must be a list of step indices`);
    }
    refuseUnsupported(className, 'solver_p', given.solver_p, null);
  },
  create: (config) => new UniPCMultistepScheduler(config),
});

/** Solves the small system `A·x = b` in float32 by Gaussian elimination with partial pivoting (LAPACK's sgesv). */
function solve32(a: number[][], b: number[]): number[] {
  const n = b.length;
  const m = a.map((row, i) => [...row, b[i]]);
  for (let c = 0; c < n; c++) {
    let p = c;
    for (let r = c + 1; r < n; r++) if (Math.abs(m[r][c]) > Math.abs(m[p][c])) p = r;
    [m[c], m[p]] = [m[p], m[c]];
    for (let r = c + 1; r < n; r++) {
      const factor = f32(m[r][c] / m[c][c]);
      for (let j = c; j <= n; j++) m[r][j] = f32(m[r][j] - f32(factor * m[c][j]));
    }
  }
  const x = new Array<number>(n).fill(0);
  for (let r = n - 1; r >= 0; r--) {
    let acc = m[r][n];
    for (let j = r + 1; j < n; j++) acc = f32(acc - f32(m[r][j] * x[j]));
    x[r] = f32(acc / m[r][r]);
  }
  return x;
}

/** The B(h) coefficients both updates share (UniPC's `R`, `b`, `h_phi_1` and `B_h` for `order`). */
interface Coefficients {
  hPhi1: number;
  bh: number;
  rows: number[][];
  b: number[];
}

/**
 * UniPCMultistepScheduler (docs/spec/diffusion.md §7.11): the UniP predictor of the given order on the data
 * predictions (`predict_x0`, the default) and the UniC corrector that refines the previous step's result with the
 * new model output before predicting again, with B(h) = e^h − 1 (`bh2`, diffusers' default) or h (`bh1`). DPM++'s
 * timesteps, with the final sigma σ_0; order 1 (one model call a step).
 */
export class UniPCMultistepScheduler extends BaseScheduler<UniPCConfig> {
  private sigmas: number[] = [];
  /** Converted model outputs, newest last (own tensors; null before the first ones). */
  private modelOutputs: Array<HostTensor | null> = [];
  private lowerOrderNums = 0;
  private lastSample: HostTensor | null = null;
  private thisOrder = 1;

  /** The sigmas after `setTimesteps` (N values then σ_0), float32 values. */
  get sigmaSchedule(): readonly number[] {
    return this.sigmas;
  }

  constructor(config?: SchedulerConfig) {
    super(uniPC, config);
  }

  protected computeTimesteps(n: number): void {
    const { timesteps, sigmas } = multistepSchedule(this.config, this.alphasCumprod, n, 'sigma_min');
    this.sigmas = sigmas;
    this.timestepList = timesteps;
    this.initNoiseSigma = 1;
  }

  override dispose(): void {
    this.modelOutputs = new Array(this.config.solver_order).fill(null);
    this.lowerOrderNums = 0;
    this.lastSample = null;
    this.thisOrder = 1;
  }

  /** The model output as the solver's variable: the data prediction x0 (or the noise ε without `predict_x0`). */
  private convert(modelOutput: HostTensor, sample: HostTensor, level: NoiseLevel): HostTensor {
    const { alpha, sigma } = level;
    const type = this.config.prediction_type;
    if (this.config.predict_x0) {
      if (type === 'epsilon') return div(sub(sample, mul(modelOutput, sigma)), alpha);
      if (type === 'v_prediction') return sub(mul(sample, alpha), mul(modelOutput, sigma));
      return copy(modelOutput);
    }
    if (type === 'epsilon') return copy(modelOutput);
    if (type === 'v_prediction') return add(mul(modelOutput, alpha), mul(sample, sigma));
    return div(sub(sample, mul(modelOutput, alpha)), sigma);
  }

  private coefficients(h: number, rks: number[], order: number): Coefficients {
    const hh = this.config.predict_x0 ? f32(-h) : h;
    const hPhi1 = f32(Math.expm1(hh));
    let hPhiK = f32(f32(hPhi1 / hh) - 1);
    let factorial = 1;
    const bh = this.config.solver_type === 'bh1' ? hh : hPhi1;
    const rows: number[][] = [];
    const b: number[] = [];
    for (let i = 1; i <= order; i++) {
      rows.push(rks.map((r) => (i === 1 ? 1 : i === 2 ? r : f32(r ** (i - 1)))));
      b.push(f32(f32(hPhiK * factorial) / bh));
      factorial *= i + 1;
      hPhiK = f32(f32(hPhiK / hh) - f32(1 / factorial));
    }
    return { hPhi1, bh, rows, b };
  }

  /**
   * `x_t_ − c · Σ ρ_k D_k` (plus `ρ_last · D1_t` for the corrector): the shared tail of both updates, from sample
   * `x` at level `s0` to level `t`.
   */
  private combine(x: HostTensor, s0: NoiseLevel, t: NoiseLevel, c: Coefficients, terms: HostTensor | null) {
    const m0 = this.modelOutputs[this.modelOutputs.length - 1] as HostTensor;
    const x0 = this.config.predict_x0;
    const base = sub(
      mul(x, x0 ? f32(t.sigma / s0.sigma) : f32(t.alpha / s0.alpha)),
      mul(m0, f32((x0 ? t.alpha : t.sigma) * c.hPhi1)),
    );
    if (terms === null) return base;
    return sub(base, mul(terms, f32((x0 ? t.alpha : t.sigma) * c.bh)));
  }

  /** The differences D1_i = (m_i − m0) / r_i of the older outputs, with their ratios r_i. */
  private differences(order: number, from: number, s0: NoiseLevel, h: number) {
    const outs = this.modelOutputs;
    const m0 = outs[outs.length - 1] as HostTensor;
    const rks: number[] = [];
    const d1s: HostTensor[] = [];
    for (let i = 1; i < order; i++) {
      const si = noiseLevel(this.sigmas[from - i]);
      const rk = f32(f32(si.lambda - s0.lambda) / h);
      rks.push(rk);
      d1s.push(div(sub(outs[outs.length - 1 - i] as HostTensor, m0), rk));
    }
    rks.push(1);
    return { rks, d1s };
  }

  /** Σ_k ρ_k · D_k (einsum over the stacked differences). */
  private weighted(rhos: number[], d1s: HostTensor[]): HostTensor | null {
    let sum: HostTensor | null = null;
    for (let k = 0; k < d1s.length; k++) {
      const term = mul(d1s[k], rhos[k]);
      sum = sum === null ? term : add(sum, term);
    }
    return sum;
  }

  /** UniP: from the sample at step k to step k + 1. */
  private predict(sample: HostTensor, k: number, order: number): HostTensor {
    const s0 = noiseLevel(this.sigmas[k]);
    const t = noiseLevel(this.sigmas[k + 1]);
    const h = f32(t.lambda - s0.lambda);
    const { rks, d1s } = this.differences(order, k, s0, h);
    const c = this.coefficients(h, rks, order);
    if (d1s.length === 0) return this.combine(sample, s0, t, c, null);
    const rhos =
      order === 2
        ? [0.5]
        : solve32(
            c.rows.slice(0, -1).map((row) => row.slice(0, -1)),
            c.b.slice(0, -1),
          );
    return this.combine(sample, s0, t, c, this.weighted(rhos, d1s));
  }

  /** UniC: the previous step's result refined with the model output at step k (`converted`). */
  private correct(converted: HostTensor, last: HostTensor, k: number, order: number): HostTensor {
    const s0 = noiseLevel(this.sigmas[k - 1]);
    const t = noiseLevel(this.sigmas[k]);
    const h = f32(t.lambda - s0.lambda);
    const { rks, d1s } = this.differences(order, k - 1, s0, h);
    const c = this.coefficients(h, rks, order);
    const rhos = order === 1 ? [0.5] : solve32(c.rows, c.b);
    const m0 = this.modelOutputs[this.modelOutputs.length - 1] as HostTensor;
    const corr = this.weighted(rhos, d1s);
    const lastTerm = mul(sub(converted, m0), rhos[rhos.length - 1]);
    return this.combine(last, s0, t, c, corr === null ? lastTerm : add(corr, lastTerm));
  }

  protected stepHost: HostStep = (modelOutput, timestep, sample, _options) => {
    this.requireTimesteps();
    const k = this.currentStepIndex(timestep);
    const cfg = this.config;
    const useCorrector = k > 0 && !cfg.disable_corrector.includes(k - 1) && this.lastSample !== null;
    const converted = this.convert(modelOutput, sample, noiseLevel(this.sigmas[k]));
    let current = sample;
    if (useCorrector) current = this.correct(converted, this.lastSample as HostTensor, k, this.thisOrder);
    this.modelOutputs.shift();
    this.modelOutputs.push(converted);
    const order = cfg.lower_order_final
      ? Math.min(cfg.solver_order, this.timestepList.length - k)
      : cfg.solver_order;
    this.thisOrder = Math.min(order, this.lowerOrderNums + 1);
    this.lastSample = copy(current);
    const prevSample = this.predict(current, k, this.thisOrder);
    if (this.lowerOrderNums < cfg.solver_order) this.lowerOrderNums += 1;
    this.stepIndex = k + 1;
    return prevSample;
  };

  protected noised(original: HostTensor, noise: HostTensor, timestep: number): HostTensor {
    this.requireTimesteps();
    const level = noiseLevel(this.sigmas[this.noiseIndex(timestep)]);
    return add(mul(original, level.alpha), mul(noise, level.sigma));
  }
}
