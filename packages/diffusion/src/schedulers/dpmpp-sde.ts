import { ConfigError } from '@tiffin/core/internal';
import { add, copy, div, mul, sub } from '../latents/float32-math.js';
import type { HostTensor } from '../latents/host-tensor.js';
import { drawNoise, type HostStep } from './base.js';
import { SHARED_DEFAULTS } from './config.js';
import { defineScheduler } from './definition.js';
import { discreteSchedule, repeatAfterFirst } from './discrete-schedule.js';
import { EulerFamilyScheduler } from './euler.js';
import { NO_SAMPLE_PREDICTION } from './kdpm2.js';
import { f32 } from './numeric.js';
import { sigmaInitNoise, sigmaToT } from './sigmas.js';
import type { SchedulerConfig, SharedSchedulerConfig, StepOptions } from './types.js';

/** DPMSolverSDEScheduler's config: the shared keys, Karras sigmas and the noise sampler's seed. */
export type DPMSolverSDEConfig = SharedSchedulerConfig & {
  use_karras_sigmas: boolean;
  noise_sampler_seed: number | null;
};

const DEFAULTS: DPMSolverSDEConfig = {
  ...SHARED_DEFAULTS,
  beta_start: 0.00085,
  beta_end: 0.012,
  timestep_spacing: 'linspace',
  use_karras_sigmas: false,
  noise_sampler_seed: null,
};

/** `dpmpp_sde` (docs/spec/diffusion.md §7.10); listed in `registry.ts`. */
export const dpmSolverSde = defineScheduler({
  name: 'dpmpp_sde',
  className: 'DPMSolverSDEScheduler',
  defaults: DEFAULTS,
  predictionTypes: NO_SAMPLE_PREDICTION,
  validate(resolved, _given, className) {
    // The Brownian noise is the generation's own, seeded per image (docs/spec/diffusion.md §8.3).
    if (resolved.noise_sampler_seed !== null) {
      throw new ConfigError(
        `${className}: noise_sampler_seed is not supported (the request's seed seeds the noise)`,
      );
    }
  },
  create: (config) => new DPMSolverSDEScheduler(config),
});

/** `t = −ln σ` and back, in float32 as the reference's 0-d tensors compute them. */
const tOf = (sigma: number) => f32(-f32(Math.log(sigma)));
const sigmaOf = (t: number) => f32(Math.exp(-t));

/**
 * DPMSolverSDEScheduler (docs/spec/diffusion.md §7.10): k-diffusion's DPM++ SDE, a stochastic midpoint method in
 * `t = −ln σ`: an ancestral DPM++ step to the midpoint, the model there, then the step from the saved sample, each
 * with noise of the interval times σ_up; the last is an Euler step to 0. Timesteps `t_0, t½_0, t_1, …, t½_{N-2},
 * t_{N-1}`, order 2. The noise of an interval is `options.brownian`'s (a Brownian tree seeded per image in the
 * service), else fresh draws from `options.noise` (as the reference fixtures give it).
 */
export class DPMSolverSDEScheduler extends EulerFamilyScheduler<DPMSolverSDEConfig> {
  override readonly order: number = 2;
  private saved: HostTensor | null = null;
  private midpointSigma: number | null = null;
  /** The generation's Brownian noise over its sigma range (made at the first step, as diffusers makes its sampler). */
  private interval: ((from: number, to: number) => HostTensor) | null = null;

  constructor(config?: SchedulerConfig) {
    super(dpmSolverSde, config);
  }

  protected override computeTimesteps(n: number): void {
    const { timesteps, sigmas, wideSigmas, logSigmas } = discreteSchedule(
      this.config,
      this.alphasCumprod,
      n,
      {
        useKarrasSigmas: this.config.use_karras_sigmas,
        float64Linspace: true,
      },
    );
    // The midpoints in t = −ln σ of the float64 sigmas, before they are stored float32.
    const list = [timesteps[0]];
    for (let k = 1; k < n; k++) {
      const t = -Math.log(wideSigmas[k - 1]);
      const tNext = -Math.log(wideSigmas[k]);
      list.push(sigmaToT(Math.exp(-(t + (tNext - t) * 0.5)), logSigmas), timesteps[k]);
    }
    this.sigmas = [...repeatAfterFirst(sigmas.slice(0, -1)), 0];
    this.timestepList = list;
    this.initNoiseSigma = sigmaInitNoise(this.sigmas, this.config.timestep_spacing);
  }

  override dispose(): void {
    this.endPair();
    this.interval = null;
  }

  private endPair(): void {
    this.saved = null;
    this.midpointSigma = null;
  }

  /** The noise of the interval [from, to]: the Brownian noise when given, else a fresh draw. */
  private noiseFor(shape: readonly number[], from: number, to: number, options: StepOptions): HostTensor {
    if (!options.brownian) return drawNoise(options.noise, shape, this.className);
    if (!this.interval) {
      const positive = this.sigmas.filter((s) => s > 0);
      this.interval = options.brownian([...shape], Math.min(...positive), Math.max(...positive));
    }
    return this.interval(from, to);
  }

  protected override inputSigma(k: number): number {
    return this.midpointSigma ?? this.sigmas[k];
  }

  protected stepHost: HostStep = (modelOutput, timestep, sample, options = {}) => {
    this.requireTimesteps();
    const k = this.currentStepIndex(timestep);
    const first = this.saved === null;
    const sigma = first ? this.sigmas[k] : this.sigmas[k - 1];
    const sigmaNext = first ? this.sigmas[k + 1] : this.sigmas[k];
    const t = tOf(sigma);
    const tProposed = f32(t + f32(f32(tOf(sigmaNext) - t) * 0.5));
    const x0 = this.predictOriginal(modelOutput, sample, first ? sigma : sigmaOf(tProposed));
    this.stepIndex = k + 1;
    if (sigmaNext === 0) {
      this.endPair();
      return add(sample, mul(div(sub(sample, x0), sigma), f32(sigmaNext - sigma)));
    }
    const tNext = first ? tProposed : tOf(sigmaNext);
    const from = first ? sample : (this.saved as HostTensor);
    const sigmaFrom = sigmaOf(t);
    const sigmaTo = sigmaOf(tNext);
    const to2 = f32(sigmaTo * sigmaTo);
    const from2 = f32(sigmaFrom * sigmaFrom);
    const sigmaUp = Math.min(sigmaTo, f32(Math.sqrt(f32(f32(to2 * f32(from2 - to2)) / from2))));
    const sigmaDown = f32(Math.sqrt(f32(to2 - f32(sigmaUp * sigmaUp))));
    const ancestralT = tOf(sigmaDown);
    const ratio = f32(sigmaOf(ancestralT) / sigmaOf(t));
    const expm1 = f32(Math.expm1(f32(t - ancestralT)));
    const noise = this.noiseFor(sample.shape, sigmaFrom, sigmaTo, options);
    const next = add(sub(mul(from, ratio), mul(x0, expm1)), mul(noise, sigmaUp));
    if (first) {
      this.saved = copy(sample);
      this.midpointSigma = sigmaTo;
    } else this.endPair();
    return next;
  };
}
