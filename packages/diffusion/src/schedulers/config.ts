import { ConfigError } from '@tiffin/core/internal';
import type {
  BetaSchedule,
  PredictionType,
  SchedulerConfig,
  SharedSchedulerConfig,
  TimestepSpacing,
} from './types.js';

/** Defaults of the keys every class reads (diffusers 0.27.2 constructors); a class may override them. */
export const SHARED_DEFAULTS: SharedSchedulerConfig = {
  num_train_timesteps: 1000,
  beta_start: 0.0001,
  beta_end: 0.02,
  beta_schedule: 'linear',
  trained_betas: null,
  prediction_type: 'epsilon',
  timestep_spacing: 'leading',
  steps_offset: 0,
};

const PREDICTION_TYPES: readonly PredictionType[] = ['epsilon', 'v_prediction', 'sample'];

/** How one scheduler class reads its config: written once, in the scheduler's own file. */
export interface SchedulerConfigSpec<C extends SharedSchedulerConfig> {
  /** diffusers class name, used in messages. */
  readonly className: string;
  /**
   * The class's constructor defaults. Its keys are exactly the keys the class reads (`from_config`):
   * the others of a folder config are ignored.
   */
  readonly defaults: C;
  /** Prediction types the class implements (default: all three). */
  readonly predictionTypes?: readonly PredictionType[];
  /**
   * Checks the class's own keys after the overlay and refuses options it does not implement; throws
   * {@link ConfigError} naming `className`.
   */
  validate?(resolved: C, given: SchedulerConfig, className: string): void;
}

/** Throws unless `value` is one of `allowed`. */
export function oneOf<T extends string>(value: unknown, allowed: readonly T[], key: string, cls: string): T {
  if (typeof value === 'string' && (allowed as readonly string[]).includes(value)) return value as T;
  throw new ConfigError(
    `${cls}: unsupported ${key} ${JSON.stringify(value)} (supported: ${allowed.join(', ')})`,
  );
}

/** Throws when a folder config sets an option diffusers has but this implementation does not. */
export function refuseUnsupported(cls: string, key: string, value: unknown, supported: unknown): void {
  if (value !== undefined && value !== null && value !== supported) {
    throw new ConfigError(`${cls}: ${key}=${JSON.stringify(value)} is not supported`);
  }
}

function checkShared(
  resolved: SharedSchedulerConfig,
  predictionTypes: readonly PredictionType[],
  cls: string,
) {
  resolved.beta_schedule = oneOf<BetaSchedule>(
    resolved.beta_schedule,
    ['linear', 'scaled_linear', 'squaredcos_cap_v2'],
    'beta_schedule',
    cls,
  );
  resolved.prediction_type = oneOf(resolved.prediction_type, predictionTypes, 'prediction_type', cls);
  resolved.timestep_spacing = oneOf<TimestepSpacing>(
    resolved.timestep_spacing,
    ['leading', 'trailing', 'linspace'],
    'timestep_spacing',
    cls,
  );
  const T = resolved.num_train_timesteps;
  if (!(typeof T === 'number' && Number.isInteger(T) && T > 0)) {
    throw new ConfigError(`${cls}: num_train_timesteps must be a positive integer, got ${JSON.stringify(T)}`);
  }
  if (!Number.isInteger(resolved.steps_offset) || resolved.steps_offset < 0) {
    throw new ConfigError(`${cls}: steps_offset must be a non-negative integer`);
  }
  const betas = resolved.trained_betas;
  if (
    betas !== null &&
    (!Array.isArray(betas) || betas.length !== T || betas.some((b) => typeof b !== 'number'))
  ) {
    throw new ConfigError(`${cls}: trained_betas must be ${T} numbers`);
  }
}

/**
 * diffusers `Class.from_config(config)` for the class described by `spec`: its defaults, overlaid with
 * the keys of `config` it reads (a null means "the default"); validates the values this implementation
 * supports and refuses the options it does not.
 */
export function readSchedulerConfig<C extends SharedSchedulerConfig>(
  spec: SchedulerConfigSpec<C>,
  config: SchedulerConfig = {},
  className: string = spec.className,
): C {
  const resolved: C = { ...spec.defaults };
  const target = resolved as Record<string, unknown>;
  for (const key of Object.keys(spec.defaults)) {
    const value = config[key];
    if (value !== undefined && value !== null) target[key] = value;
  }
  checkShared(resolved, spec.predictionTypes ?? PREDICTION_TYPES, className);
  refuseUnsupported(className, 'rescale_betas_zero_snr', config.rescale_betas_zero_snr, false);
  refuseUnsupported(className, 'thresholding', config.thresholding, false);
  refuseUnsupported(className, 'timestep_type', config.timestep_type, 'discrete');
  spec.validate?.(resolved, config, className);
  return resolved;
}
