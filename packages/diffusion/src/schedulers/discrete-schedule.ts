import { sigmasFromAlphasCumprod } from './noise-schedule.js';
import { f32, interpIndex, linspace, roundHalfEven } from './numeric.js';
import { karrasSigmas, logSigmaTable, sigmaToT } from './sigmas.js';
import { eulerTimesteps } from './spacing.js';
import type { SharedSchedulerConfig } from './types.js';

/** Timesteps and sigmas of the k-diffusion discrete schedulers (Heun, LMS, KDPM2, DPM++ SDE) before interleaving. */
export interface DiscreteSchedule {
  /** N descending timesteps (fractional with Karras sigmas unless rounded). */
  timesteps: number[];
  /** The N sigmas then the final 0, float32 values. */
  sigmas: number[];
  /** The N sigmas as computed, float64 (before they are stored float32). */
  wideSigmas: number[];
  /** `ln σ_i` of the training table, float32 (for `sigmaToT`). */
  logSigmas: Float32Array;
}

export interface DiscreteScheduleOptions {
  useKarrasSigmas: boolean;
  /** KDPM2's Karras timesteps are rounded to integers; the others keep the fraction. */
  roundKarrasTimesteps?: boolean;
  /** DPMSolverSDEScheduler's `linspace` timesteps are float64 (the others' are float32). */
  float64Linspace?: boolean;
}

/**
 * `set_timesteps(N)` of HeunDiscreteScheduler, LMSDiscreteScheduler, KDPM2(Ancestral)DiscreteScheduler and
 * DPMSolverSDEScheduler (diffusers 0.27.2, docs/spec/diffusion.md §7.5 and §7.10): the spacing rule of Euler, the
 * training sigmas interpolated at those timesteps, or Karras sigmas between the first and last of them with their
 * timesteps by `sigma_to_t`; then the final 0.
 */
export function discreteSchedule(
  config: SharedSchedulerConfig,
  alphasCumprod: Float32Array,
  n: number,
  options: DiscreteScheduleOptions,
): DiscreteSchedule {
  let timesteps =
    options.float64Linspace && config.timestep_spacing === 'linspace'
      ? linspace(0, config.num_train_timesteps - 1, n).reverse()
      : eulerTimesteps(config, n);
  const table = sigmasFromAlphasCumprod(alphasCumprod);
  const logSigmas = logSigmaTable(table);
  let sigmas = timesteps.map((t) => interpIndex(t, table));
  if (options.useKarrasSigmas) {
    sigmas = karrasSigmas(sigmas[0], sigmas[sigmas.length - 1], n);
    timesteps = sigmas.map((s) => sigmaToT(s, logSigmas));
    if (options.roundKarrasTimesteps) timesteps = timesteps.map(roundHalfEven);
  }
  return { timesteps, sigmas: [...sigmas, 0].map(f32), wideSigmas: sigmas, logSigmas };
}

/** `[v_0, v_1, v_1, v_2, v_2, …]`: diffusers' `cat([v[:1], v[1:].repeat_interleave(2)])` of the two-evaluation classes. */
export function repeatAfterFirst(values: readonly number[]): number[] {
  return [values[0], ...values.slice(1).flatMap((v) => [v, v])];
}
