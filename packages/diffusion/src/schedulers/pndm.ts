import { add, copy, div, mul, sub } from '../latents/float32-math.js';
import type { HostTensor } from '../latents/host-tensor.js';
import { BaseScheduler, type HostStep } from './base.js';
import { SHARED_DEFAULTS } from './config.js';
import { addNoiseByAlpha, alphaAt } from './ddim.js';
import { defineScheduler } from './definition.js';
import { f32 } from './numeric.js';
import { integerTimestepsAscending } from './spacing.js';
import type { SchedulerConfig, SharedSchedulerConfig } from './types.js';

/** PNDMScheduler's config: the shared keys and its own. */
export type PNDMConfig = SharedSchedulerConfig & {
  set_alpha_to_one: boolean;
  skip_prk_steps: boolean;
};

const DEFAULTS: PNDMConfig = { ...SHARED_DEFAULTS, set_alpha_to_one: false, skip_prk_steps: false };

/** `pndm` (docs/spec/diffusion.md §7.4, the SD 1.x default); listed in `registry.ts`. */
export const pndm = defineScheduler({
  name: 'pndm',
  className: 'PNDMScheduler',
  defaults: DEFAULTS,
  // diffusers' PNDM raises for `sample`.
  predictionTypes: ['epsilon', 'v_prediction'],
  create: (config) => new PNDMScheduler(config),
});

/** Runge–Kutta warm-up length of PNDM (4 evaluations per step, 3 steps). */
const PNDM_ORDER = 4;

/**
 * PNDMScheduler (docs/spec/diffusion.md §7.4): PLMS linear multistep; with `skip_prk_steps: false` the first steps
 * are the pseudo Runge–Kutta warm-up of diffusers.
 */
export class PNDMScheduler extends BaseScheduler<PNDMConfig> {
  private readonly finalAlphaCumprod: number;
  private prkTimesteps: number[] = [];
  /** Previous model outputs (own copies). */
  private ets: HostTensor[] = [];
  private counter = 0;
  private curSample: HostTensor | null = null;
  /** Running Runge–Kutta combination of model outputs (PRK only). */
  private curModelOutput: HostTensor | null = null;

  constructor(config?: SchedulerConfig) {
    super(pndm, config);
    this.finalAlphaCumprod = this.config.set_alpha_to_one ? 1 : this.alphasCumprod[0];
  }

  protected computeTimesteps(n: number): void {
    const base = integerTimestepsAscending(this.config, n);
    const T = this.config.num_train_timesteps;
    let plms: number[];
    if (this.config.skip_prk_steps) {
      this.prkTimesteps = [];
      plms = [...base.slice(0, -1), base[base.length - 2], base[base.length - 1]].reverse();
      // N = 1 has no second-to-last entry: diffusers then yields the single timestep.
      if (n === 1) plms = [base[0]];
    } else {
      const half = Math.floor(Math.floor(T / n) / 2);
      const last = base.slice(-PNDM_ORDER);
      const prk: number[] = [];
      for (const t of last) prk.push(t, t);
      const tiled = prk.map((t, i) => t + (i % 2 === 0 ? 0 : half));
      const repeated: number[] = [];
      for (const t of tiled.slice(0, -1)) repeated.push(t, t);
      this.prkTimesteps = repeated.slice(1, -1).reverse();
      plms = base.slice(0, -3).reverse();
    }
    this.timestepList = [...this.prkTimesteps, ...plms];
    this.counter = 0;
  }

  override dispose(): void {
    this.ets = [];
    this.curSample = null;
    this.curModelOutput = null;
    this.counter = 0;
  }

  protected stepHost: HostStep = (modelOutput, timestep, sample, _options) => {
    this.requireTimesteps();
    if (this.counter < this.prkTimesteps.length && !this.config.skip_prk_steps) {
      return this.stepPrk(modelOutput, timestep, sample);
    }
    return this.stepPlms(modelOutput, timestep, sample);
  };

  private get stepSize(): number {
    return Math.floor(this.config.num_train_timesteps / (this.numInferenceSteps as number));
  }

  private stepPrk(modelOutput: HostTensor, timestep: number, sample: HostTensor): HostTensor {
    const diffToPrev = this.counter % 2 ? 0 : Math.floor(this.stepSize / 2);
    const prevTimestep = timestep - diffToPrev;
    const t = this.prkTimesteps[Math.floor(this.counter / 4) * 4];
    const phase = this.counter % 4;
    let output: HostTensor;
    const accumulate = (weight: number): void => {
      const prev = this.curModelOutput;
      this.curModelOutput = prev ? add(prev, mul(modelOutput, weight)) : mul(modelOutput, weight);
    };
    if (phase === 0) {
      accumulate(1 / 6);
      this.ets.push(copy(modelOutput));
      this.curSample = copy(sample);
      output = modelOutput;
    } else if (phase === 1 || phase === 2) {
      accumulate(1 / 3);
      output = modelOutput;
    } else {
      output = add(this.curModelOutput as HostTensor, mul(modelOutput, 1 / 6));
      this.curModelOutput = null;
    }
    const start = this.curSample ?? sample;
    const prevSample = this.prevSample(start, t, prevTimestep, output);
    this.counter += 1;
    return prevSample;
  }

  private stepPlms(modelOutput: HostTensor, timestep: number, sample: HostTensor): HostTensor {
    if (!this.config.skip_prk_steps && this.ets.length < 3) {
      throw new Error(`${this.className}: PLMS needs the Runge–Kutta warm-up steps first`);
    }
    let t = timestep;
    let prevTimestep = timestep - this.stepSize;
    if (this.counter !== 1) {
      while (this.ets.length > 3) this.ets.shift();
      this.ets.push(copy(modelOutput));
    } else {
      prevTimestep = timestep;
      t = timestep + this.stepSize;
    }
    const ets = this.ets;
    const k = ets.length;
    let start = sample;
    let output: HostTensor;
    if (k === 1 && this.counter === 0) {
      output = modelOutput;
      this.curSample = copy(sample);
    } else if (k === 1 && this.counter === 1) {
      output = div(add(modelOutput, ets[k - 1]), 2);
      start = this.curSample as HostTensor;
      this.curSample = null;
    } else if (k === 2) {
      output = div(sub(mul(ets[1], 3), ets[0]), 2);
    } else if (k === 3) {
      output = div(add(sub(mul(ets[2], 23), mul(ets[1], 16)), mul(ets[0], 5)), 12);
    } else {
      output = mul(sub(add(sub(mul(ets[3], 55), mul(ets[2], 59)), mul(ets[1], 37)), mul(ets[0], 9)), 1 / 24);
    }
    const prevSample = this.prevSample(start, t, prevTimestep, output);
    this.counter += 1;
    return prevSample;
  }

  /** diffusers `_get_prev_sample` (formula (9) of the PNDM paper), float32 coefficients. */
  private prevSample(sample: HostTensor, t: number, prev: number, modelOutput: HostTensor): HostTensor {
    const aT = alphaAt(this.alphasCumprod, t, this.className);
    const aP = prev >= 0 ? this.alphasCumprod[prev] : this.finalAlphaCumprod;
    const bT = f32(1 - aT);
    const bP = f32(1 - aP);
    const sampleCoeff = f32(Math.sqrt(f32(aP / aT)));
    const denom = f32(f32(aT * f32(Math.sqrt(bP))) + f32(Math.sqrt(f32(f32(aT * bT) * aP))));
    const diff = f32(aP - aT);
    const e =
      this.config.prediction_type === 'v_prediction'
        ? add(mul(modelOutput, f32(Math.sqrt(aT))), mul(sample, f32(Math.sqrt(bT))))
        : modelOutput;
    return sub(mul(sample, sampleCoeff), div(mul(e, diff), denom));
  }

  protected noised(original: HostTensor, noise: HostTensor, timestep: number): HostTensor {
    return addNoiseByAlpha(alphaAt(this.alphasCumprod, timestep, this.className), original, noise);
  }
}
