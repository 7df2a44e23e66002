import * as tf from '@tensorflow/tfjs';
import { BaseScheduler } from './base.js';
import { SHARED_DEFAULTS } from './config.js';
import { addNoiseByAlpha, alphaAt } from './ddim.js';
import { defineScheduler } from './definition.js';
import { f32 } from './numeric.js';
import { integerTimestepsAscending } from './spacing.js';
import type { SchedulerConfig, SharedSchedulerConfig, StepOptions, StepResult } from './types.js';

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
  /** Previous model outputs (own copies, kept out of tidy scopes). */
  private ets: tf.Tensor[] = [];
  private counter = 0;
  private curSample: tf.Tensor | null = null;
  /** Running Runge–Kutta combination of model outputs (PRK only). */
  private curModelOutput: tf.Tensor | null = null;

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
    for (const e of this.ets) e.dispose();
    this.ets = [];
    this.curSample?.dispose();
    this.curSample = null;
    this.curModelOutput?.dispose();
    this.curModelOutput = null;
    this.counter = 0;
  }

  step(modelOutput: tf.Tensor, timestep: number, sample: tf.Tensor, _options?: StepOptions): StepResult {
    this.requireTimesteps();
    if (this.counter < this.prkTimesteps.length && !this.config.skip_prk_steps) {
      return this.stepPrk(modelOutput, timestep, sample);
    }
    return this.stepPlms(modelOutput, timestep, sample);
  }

  private get stepSize(): number {
    return Math.floor(this.config.num_train_timesteps / (this.numInferenceSteps as number));
  }

  private stepPrk(modelOutput: tf.Tensor, timestep: number, sample: tf.Tensor): StepResult {
    const diffToPrev = this.counter % 2 ? 0 : Math.floor(this.stepSize / 2);
    const prevTimestep = timestep - diffToPrev;
    const t = this.prkTimesteps[Math.floor(this.counter / 4) * 4];
    const phase = this.counter % 4;
    let output: tf.Tensor;
    const accumulate = (weight: number): void => {
      const prev = this.curModelOutput;
      this.curModelOutput = tf.keep(
        tf.tidy(() => (prev ? tf.add(prev, tf.mul(modelOutput, weight)) : tf.mul(modelOutput, weight))),
      );
      prev?.dispose();
    };
    if (phase === 0) {
      accumulate(1 / 6);
      this.ets.push(tf.keep(tf.clone(modelOutput)));
      this.curSample?.dispose();
      this.curSample = tf.keep(tf.clone(sample));
      output = tf.clone(modelOutput);
    } else if (phase === 1 || phase === 2) {
      accumulate(1 / 3);
      output = tf.clone(modelOutput);
    } else {
      const acc = this.curModelOutput as tf.Tensor;
      output = tf.tidy(() => tf.add(acc, tf.mul(modelOutput, 1 / 6)));
      acc.dispose();
      this.curModelOutput = null;
    }
    const start = this.curSample ?? sample;
    const prevSample = this.prevSample(start, t, prevTimestep, output);
    output.dispose();
    this.counter += 1;
    return { prevSample };
  }

  private stepPlms(modelOutput: tf.Tensor, timestep: number, sample: tf.Tensor): StepResult {
    if (!this.config.skip_prk_steps && this.ets.length < 3) {
      throw new Error(`${this.className}: PLMS needs the Runge–Kutta warm-up steps first`);
    }
    let t = timestep;
    let prevTimestep = timestep - this.stepSize;
    if (this.counter !== 1) {
      while (this.ets.length > 3) this.ets.shift()?.dispose();
      this.ets.push(tf.keep(tf.clone(modelOutput)));
    } else {
      prevTimestep = timestep;
      t = timestep + this.stepSize;
    }
    const ets = this.ets;
    const k = ets.length;
    let start = sample;
    let restoredSample: tf.Tensor | null = null;
    let output: tf.Tensor;
    if (k === 1 && this.counter === 0) {
      output = tf.clone(modelOutput);
      this.curSample = tf.keep(tf.clone(sample));
    } else if (k === 1 && this.counter === 1) {
      output = tf.tidy(() => tf.div(tf.add(modelOutput, ets[k - 1]), 2));
      restoredSample = this.curSample as tf.Tensor;
      start = restoredSample;
      this.curSample = null;
    } else if (k === 2) {
      output = tf.tidy(() => tf.div(tf.sub(tf.mul(ets[1], 3), ets[0]), 2));
    } else if (k === 3) {
      output = tf.tidy(() =>
        tf.div(tf.add(tf.sub(tf.mul(ets[2], 23), tf.mul(ets[1], 16)), tf.mul(ets[0], 5)), 12),
      );
    } else {
      output = tf.tidy(() =>
        tf.mul(
          tf.sub(
            tf.add(tf.sub(tf.mul(ets[3], 55), tf.mul(ets[2], 59)), tf.mul(ets[1], 37)),
            tf.mul(ets[0], 9),
          ),
          1 / 24,
        ),
      );
    }
    const prevSample = this.prevSample(start, t, prevTimestep, output);
    output.dispose();
    restoredSample?.dispose();
    this.counter += 1;
    return { prevSample };
  }

  /** diffusers `_get_prev_sample` (formula (9) of the PNDM paper), float32 coefficients. */
  private prevSample(sample: tf.Tensor, t: number, prev: number, modelOutput: tf.Tensor): tf.Tensor {
    const aT = alphaAt(this.alphasCumprod, t, this.className);
    const aP = prev >= 0 ? this.alphasCumprod[prev] : this.finalAlphaCumprod;
    const bT = f32(1 - aT);
    const bP = f32(1 - aP);
    const sampleCoeff = f32(Math.sqrt(f32(aP / aT)));
    const denom = f32(f32(aT * f32(Math.sqrt(bP))) + f32(Math.sqrt(f32(f32(aT * bT) * aP))));
    const diff = f32(aP - aT);
    return tf.tidy(() => {
      const e =
        this.config.prediction_type === 'v_prediction'
          ? tf.add(tf.mul(modelOutput, f32(Math.sqrt(aT))), tf.mul(sample, f32(Math.sqrt(bT))))
          : modelOutput;
      return tf.sub(tf.mul(sample, sampleCoeff), tf.div(tf.mul(e, diff), denom));
    });
  }

  addNoise(original: tf.Tensor, noise: tf.Tensor, timestep: number): tf.Tensor {
    return addNoiseByAlpha(alphaAt(this.alphasCumprod, timestep, this.className), original, noise);
  }
}
