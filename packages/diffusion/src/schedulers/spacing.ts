import { InvalidArgument } from '@tiffin/core';
import { arange, f32, linspace, roundHalfEven } from './numeric.js';
import type { SharedSchedulerConfig } from './types.js';

/** Validates a requested step count (a client value). */
export function checkStepCount(numInferenceSteps: number, numTrainTimesteps: number): void {
  if (!Number.isInteger(numInferenceSteps) || numInferenceSteps < 1) {
    throw new InvalidArgument(`num_inference_steps must be a positive integer, got ${numInferenceSteps}`);
  }
  if (numInferenceSteps > numTrainTimesteps) {
    throw new InvalidArgument(
      `num_inference_steps (${numInferenceSteps}) cannot exceed the model's num_train_timesteps (${numTrainTimesteps})`,
    );
  }
}

/**
 * Ascending integer base timesteps of DDIM/PNDM (docs/spec/diffusion.md §7.1), before reversing: `leading` adds
 * `steps_offset`; `trailing` and `linspace` ignore it.
 */
export function integerTimestepsAscending(config: SharedSchedulerConfig, n: number): number[] {
  const T = config.num_train_timesteps;
  switch (config.timestep_spacing) {
    case 'leading': {
      const ratio = Math.floor(T / n);
      return Array.from({ length: n }, (_, k) => k * ratio + config.steps_offset);
    }
    case 'trailing':
      return arange(T, 0, -T / n)
        .map((t) => roundHalfEven(t) - 1)
        .reverse();
    case 'linspace':
      return linspace(0, T - 1, n).map(roundHalfEven);
  }
}

/**
 * Euler / Euler ancestral timesteps (descending, float32 values): like DDIM's, but `linspace`
 * keeps the fractional values.
 */
export function eulerTimesteps(config: SharedSchedulerConfig, n: number): number[] {
  if (config.timestep_spacing === 'linspace') {
    // np.linspace(0, T - 1, N, dtype=np.float32): computed in float64, stored float32.
    return linspace(0, config.num_train_timesteps - 1, n)
      .map(f32)
      .reverse();
  }
  return integerTimestepsAscending(config, n).reverse();
}

/** DPM-Solver++ timesteps (docs/spec/diffusion.md §7.7, the N + 1 construction), descending integers. */
export function dpmTimesteps(config: SharedSchedulerConfig, n: number): number[] {
  const T = config.num_train_timesteps;
  switch (config.timestep_spacing) {
    case 'linspace':
      return linspace(0, T - 1, n + 1)
        .map(roundHalfEven)
        .reverse()
        .slice(0, n);
    case 'leading': {
      const ratio = Math.floor(T / (n + 1));
      return Array.from({ length: n + 1 }, (_, k) => k * ratio)
        .reverse()
        .slice(0, n)
        .map((t) => t + config.steps_offset);
    }
    case 'trailing':
      return arange(T, 0, -T / n).map((t) => roundHalfEven(t) - 1);
  }
}
