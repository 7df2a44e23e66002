import { ConfigError } from '@tiffin/core';
import type {
  BetaSchedule,
  PredictionType,
  ResolvedSchedulerConfig,
  SchedulerConfig,
  SchedulerName,
  TimestepSpacing,
} from './types.js';

/** Defaults shared by every class (diffusers 0.27.2 constructors). */
const COMMON_DEFAULTS: ResolvedSchedulerConfig = {
  num_train_timesteps: 1000,
  beta_start: 0.0001,
  beta_end: 0.02,
  beta_schedule: 'linear',
  trained_betas: null,
  prediction_type: 'epsilon',
  timestep_spacing: 'leading',
  steps_offset: 0,
  set_alpha_to_one: false,
  clip_sample: false,
  clip_sample_range: 1,
  skip_prk_steps: false,
  use_karras_sigmas: false,
  interpolation_type: 'linear',
  sigma_min: null,
  sigma_max: null,
  solver_order: 2,
  algorithm_type: 'dpmsolver++',
  solver_type: 'midpoint',
  lower_order_final: true,
  euler_at_final: false,
  final_sigmas_type: 'zero',
};

/** Per-class defaults that differ from the common ones (spec 7.8). */
const CLASS_DEFAULTS: Record<SchedulerName, Partial<ResolvedSchedulerConfig>> = {
  ddim: { timestep_spacing: 'leading', set_alpha_to_one: true, clip_sample: true },
  pndm: { timestep_spacing: 'leading', set_alpha_to_one: false, skip_prk_steps: false },
  euler: { timestep_spacing: 'linspace' },
  euler_a: { timestep_spacing: 'linspace' },
  dpmpp_2m: { timestep_spacing: 'linspace' },
};

/** Config keys each class reads; other keys of a folder config are ignored (from_config). */
const CLASS_KEYS: Record<SchedulerName, readonly (keyof ResolvedSchedulerConfig)[]> = {
  ddim: ['set_alpha_to_one', 'clip_sample', 'clip_sample_range'],
  pndm: ['set_alpha_to_one', 'skip_prk_steps'],
  euler: ['use_karras_sigmas', 'interpolation_type', 'sigma_min', 'sigma_max'],
  euler_a: [],
  dpmpp_2m: [
    'solver_order',
    'algorithm_type',
    'solver_type',
    'lower_order_final',
    'euler_at_final',
    'use_karras_sigmas',
    'final_sigmas_type',
  ],
};

const SHARED_KEYS: readonly (keyof ResolvedSchedulerConfig)[] = [
  'num_train_timesteps',
  'beta_start',
  'beta_end',
  'beta_schedule',
  'trained_betas',
  'prediction_type',
  'timestep_spacing',
  'steps_offset',
];

function oneOf<T extends string>(value: unknown, allowed: readonly T[], key: string, cls: string): T {
  if (typeof value === 'string' && (allowed as readonly string[]).includes(value)) return value as T;
  throw new ConfigError(
    `${cls}: unsupported ${key} ${JSON.stringify(value)} (supported: ${allowed.join(', ')})`,
  );
}

function positiveInteger(value: unknown, key: string, cls: string): number {
  if (typeof value === 'number' && Number.isInteger(value) && value > 0) return value;
  throw new ConfigError(`${cls}: ${key} must be a positive integer, got ${JSON.stringify(value)}`);
}

/**
 * diffusers `Class.from_config(config)`: class defaults, overlaid with the keys of `config` the class
 * knows; validates the values this implementation supports and rejects the options it does not.
 */
export function resolveSchedulerConfig(
  name: SchedulerName,
  className: string,
  config: SchedulerConfig = {},
): ResolvedSchedulerConfig {
  const resolved: ResolvedSchedulerConfig = { ...COMMON_DEFAULTS, ...CLASS_DEFAULTS[name] };
  const target = resolved as unknown as Record<string, unknown>;
  for (const key of [...SHARED_KEYS, ...CLASS_KEYS[name]]) {
    const value = config[key];
    // A null in a folder config means "the default" for the keys that allow null.
    if (
      value !== undefined &&
      !(value === null && key !== 'trained_betas' && key !== 'sigma_min' && key !== 'sigma_max')
    ) {
      target[key] = value;
    }
  }
  resolved.beta_schedule = oneOf<BetaSchedule>(
    resolved.beta_schedule,
    ['linear', 'scaled_linear', 'squaredcos_cap_v2'],
    'beta_schedule',
    className,
  );
  resolved.prediction_type = oneOf<PredictionType>(
    resolved.prediction_type,
    name === 'pndm' ? ['epsilon', 'v_prediction'] : ['epsilon', 'v_prediction', 'sample'],
    'prediction_type',
    className,
  );
  resolved.timestep_spacing = oneOf<TimestepSpacing>(
    resolved.timestep_spacing,
    ['leading', 'trailing', 'linspace'],
    'timestep_spacing',
    className,
  );
  resolved.num_train_timesteps = positiveInteger(
    resolved.num_train_timesteps,
    'num_train_timesteps',
    className,
  );
  if (!Number.isInteger(resolved.steps_offset) || resolved.steps_offset < 0) {
    throw new ConfigError(`${className}: steps_offset must be a non-negative integer`);
  }
  if (resolved.trained_betas !== null) {
    const betas = resolved.trained_betas;
    if (
      !Array.isArray(betas) ||
      betas.length !== resolved.num_train_timesteps ||
      betas.some((b) => typeof b !== 'number')
    ) {
      throw new ConfigError(`${className}: trained_betas must be ${resolved.num_train_timesteps} numbers`);
    }
  }
  resolved.interpolation_type = oneOf(
    resolved.interpolation_type,
    ['linear'],
    'interpolation_type',
    className,
  );
  resolved.algorithm_type = oneOf(resolved.algorithm_type, ['dpmsolver++'], 'algorithm_type', className);
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
  // Options diffusers has but this implementation does not: refuse rather than silently differ.
  const unsupported: [string, unknown, unknown][] = [
    ['rescale_betas_zero_snr', config.rescale_betas_zero_snr, false],
    ['thresholding', config.thresholding, false],
    ['timestep_type', config.timestep_type, 'discrete'],
    ['use_lu_lambdas', name === 'dpmpp_2m' ? config.use_lu_lambdas : undefined, false],
  ];
  for (const [key, value, ok] of unsupported) {
    if (value !== undefined && value !== null && value !== ok) {
      throw new ConfigError(`${className}: ${key}=${JSON.stringify(value)} is not supported`);
    }
  }
  const lambdaMin = config.lambda_min_clipped;
  if (name === 'dpmpp_2m' && typeof lambdaMin === 'number' && Number.isFinite(lambdaMin)) {
    throw new ConfigError(`${className}: a finite lambda_min_clipped is not supported`);
  }
  return resolved;
}
