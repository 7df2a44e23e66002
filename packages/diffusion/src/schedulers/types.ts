import type { HostTensor } from '../latents/host-tensor.js';
import type { AnyTensor } from '../latents/tfjs-interop.js';

export type BetaSchedule = 'linear' | 'scaled_linear' | 'squaredcos_cap_v2';
export type TimestepSpacing = 'leading' | 'trailing' | 'linspace';
export type PredictionType = 'epsilon' | 'v_prediction' | 'sample';

/**
 * A diffusers scheduler config as read from `scheduler/scheduler_config.json` (snake_case keys,
 * all optional). `from_config` semantics (docs/spec/diffusion.md §7.8): keys the chosen class knows are used, unknown
 * keys are ignored, missing keys take the class default. The keys every class reads are named here;
 * the class-specific ones (e.g. DDIM's `clip_sample`) are named by each scheduler's own config type.
 */
export interface SchedulerConfig {
  _class_name?: string;
  _diffusers_version?: string;
  num_train_timesteps?: number;
  beta_start?: number;
  beta_end?: number;
  beta_schedule?: BetaSchedule | string;
  trained_betas?: number[] | null;
  prediction_type?: PredictionType | string;
  timestep_spacing?: TimestepSpacing | string;
  steps_offset?: number;
  [key: string]: unknown;
}

/**
 * Standard-normal draws for stochastic steps. Called once per draw with the sample's shape; returns
 * a Float32Array in C order or a tensor (a TF.js one passes to the scheduler, which disposes it).
 */
export type NoiseSource = (shape: number[]) => AnyTensor | Float32Array;

/**
 * Brownian-motion noise (docs/spec/diffusion.md §7.10): given a sample's shape and the sigma range a generation runs
 * over, the draws of an interval, `(W(to) − W(from)) / sqrt|to − from|` (standard normal), the same for an interval
 * whatever else was asked.
 */
export type BrownianNoise = (
  shape: number[],
  sigmaMin: number,
  sigmaMax: number,
) => (from: number, to: number) => HostTensor;

export interface StepOptions {
  /** Required by schedulers that draw noise (Euler ancestral; DDIM with eta > 0); ignored by others. */
  noise?: NoiseSource;
  /** DPM++ SDE's noise, seeded per image; without it that scheduler takes fresh draws from `noise`. */
  brownian?: BrownianNoise;
  /** DDIM only (docs/spec/diffusion.md §7.3); other schedulers ignore it, as diffusers does. Default 0. */
  eta?: number;
}

export interface StepResult<T extends AnyTensor = HostTensor> {
  /** The sample for the next timestep: a new tensor of the sample's kind, owned by the caller. */
  prevSample: T;
}

/** Timesteps left after img2img strength truncation (docs/spec/diffusion.md §8.2). */
export interface Img2ImgTimesteps {
  /** The timesteps to denoise over (a copy). `timesteps[0]` is the one to pass to `addNoise`. */
  timesteps: number[];
  /** Index into `scheduler.timesteps` where denoising starts (`start · order`). */
  beginIndex: number;
}

/**
 * One scheduler instance holds per-generation state (step index, multistep history): create a
 * fresh one per generation with {@link createScheduler}; never share one between concurrent
 * generations.
 *
 * The maths runs on host float32 arrays (`HostTensor`) whatever the engine; TF.js tensors are accepted too, and
 * then the results are TF.js tensors. Methods never dispose their arguments; every returned tensor is new and
 * owned by the caller. What the scheduler keeps between steps (previous model outputs) are its own copies;
 * `dispose()` forgets them.
 */
export interface Scheduler {
  /** The request name (`SchedulerName`, e.g. `dpmpp_2m`). */
  readonly name: string;
  /** diffusers class name, e.g. `PNDMScheduler`. */
  readonly className: string;
  /** The resolved config: the class defaults overlaid with the keys of the given config the class reads. */
  readonly config: Readonly<ResolvedSchedulerConfig>;
  /** Model evaluations per "step" in diffusers' sense (1 for every class here, docs/spec/diffusion.md §7.9). */
  readonly order: number;
  /** Factor for the initial latents (txt2img). Valid after `setTimesteps`. */
  readonly initNoiseSigma: number;
  /** Descending timesteps after `setTimesteps` (PNDM: N + 1 entries; Euler: possibly fractional). */
  readonly timesteps: readonly number[];
  readonly numInferenceSteps: number | null;

  /** Computes timesteps (and sigmas) for N inference steps and resets the per-generation state. */
  setTimesteps(numInferenceSteps: number): void;
  /** img2img: the index of the first timestep that will be stepped (diffusers `set_begin_index`). */
  setBeginIndex(index: number): void;
  /** Scales the UNet input for `timestep` (identity for DDIM/PNDM/DPM++). */
  scaleModelInput<T extends AnyTensor>(sample: T, timestep: number): T;
  /** One denoising step from `timestep`. */
  step<T extends AnyTensor>(
    modelOutput: T,
    timestep: number,
    sample: T,
    options?: StepOptions,
  ): StepResult<T>;
  /** Forward-noises `original` to `timestep` (img2img start, inpainting's blend; docs/spec/diffusion.md §7.9). */
  addNoise<T extends AnyTensor>(original: T, noise: T, timestep: number): T;
  /** Forgets what was kept between steps. The instance can be reused after `setTimesteps`. */
  dispose(): void;
}

/**
 * The config keys every scheduler class reads (the training noise schedule and timestep spacing), after
 * applying the class defaults. Each class adds its own keys in its own file (e.g. `DDIMConfig`).
 */
export type SharedSchedulerConfig = {
  num_train_timesteps: number;
  beta_start: number;
  beta_end: number;
  beta_schedule: BetaSchedule;
  trained_betas: number[] | null;
  prediction_type: PredictionType;
  timestep_spacing: TimestepSpacing;
  steps_offset: number;
};

/**
 * A scheduler's resolved config as seen through the {@link Scheduler} interface: the shared keys, typed,
 * plus the class's own keys (typed on the class itself, e.g. `DDIMScheduler.config.clip_sample`).
 */
export type ResolvedSchedulerConfig = SharedSchedulerConfig & { readonly [key: string]: unknown };
