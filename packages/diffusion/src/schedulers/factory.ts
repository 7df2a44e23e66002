import { InvalidArgument } from '@tiffin/core';
import { DDIMScheduler } from './ddim.js';
import { DPMSolverMultistepScheduler } from './dpm-solver.js';
import { EulerDiscreteScheduler } from './euler.js';
import { EulerAncestralDiscreteScheduler } from './euler-ancestral.js';
import { PNDMScheduler } from './pndm.js';
import {
  SCHEDULER_CLASS_NAMES,
  SCHEDULER_NAMES,
  type Scheduler,
  type SchedulerConfig,
  type SchedulerName,
} from './types.js';

/** True when `value` is one of {@link SCHEDULER_NAMES}. */
export function isSchedulerName(value: unknown): value is SchedulerName {
  return typeof value === 'string' && (SCHEDULER_NAMES as readonly string[]).includes(value);
}

/**
 * A fresh scheduler of the given kind configured from a diffusers scheduler config
 * (`Class.from_config(config)`, spec 7.8). Call `setTimesteps` before use.
 */
export function createScheduler(name: SchedulerName, config?: SchedulerConfig): Scheduler {
  switch (name) {
    case 'pndm':
      return new PNDMScheduler(config);
    case 'ddim':
      return new DDIMScheduler(config);
    case 'euler':
      return new EulerDiscreteScheduler(config);
    case 'euler_a':
      return new EulerAncestralDiscreteScheduler(config);
    case 'dpmpp_2m':
      return new DPMSolverMultistepScheduler(config);
    default:
      throw new InvalidArgument(
        `unknown scheduler ${JSON.stringify(name)}; expected one of: ${SCHEDULER_NAMES.join(', ')}`,
      );
  }
}

/**
 * The scheduler name for a folder config's `_class_name` (e.g. `PNDMScheduler` → `pndm`), or
 * undefined for classes this package does not implement.
 */
export function schedulerNameForClass(className: string | undefined): SchedulerName | undefined {
  return SCHEDULER_NAMES.find((n) => SCHEDULER_CLASS_NAMES[n] === className);
}

/** A scheduler for a model folder's own config (the "default" scheduler). */
export function createSchedulerFromFolderConfig(config: SchedulerConfig): Scheduler {
  const name = schedulerNameForClass(config._class_name);
  if (!name) {
    throw new InvalidArgument(
      `scheduler class ${JSON.stringify(config._class_name)} is not supported; supported: ${SCHEDULER_NAMES.map((n) => SCHEDULER_CLASS_NAMES[n]).join(', ')}`,
    );
  }
  return createScheduler(name, config);
}
