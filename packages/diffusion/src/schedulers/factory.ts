import { InvalidArgument } from '@tiffin/core';
import { readSchedulerConfig } from './config.js';
import type { SchedulerDefinition } from './definition.js';
import { SCHEDULER_NAMES, SCHEDULERS, type SchedulerName, schedulerDefinition } from './registry.js';
import type { ResolvedSchedulerConfig, Scheduler, SchedulerConfig } from './types.js';

/** True when `value` is one of {@link SCHEDULER_NAMES}. */
export function isSchedulerName(value: unknown): value is SchedulerName {
  return typeof value === 'string' && (SCHEDULER_NAMES as readonly string[]).includes(value);
}

function definitionFor(name: string) {
  const definition = schedulerDefinition(name);
  if (!definition) {
    throw new InvalidArgument(
      `unknown scheduler ${JSON.stringify(name)}; expected one of: ${SCHEDULER_NAMES.join(', ')}`,
    );
  }
  return definition;
}

/**
 * A fresh scheduler of the given kind configured from a diffusers scheduler config
 * (`Class.from_config(config)`, docs/spec/diffusion.md §7.8). Call `setTimesteps` before use.
 */
export function createScheduler(name: SchedulerName, config?: SchedulerConfig): Scheduler {
  return definitionFor(name).create(config);
}

/**
 * diffusers `Class.from_config(config)` for the named scheduler without making one: its defaults
 * overlaid with the keys it reads, validated. `className` only changes the name used in messages.
 */
export function resolveSchedulerConfig(
  name: SchedulerName,
  className?: string,
  config?: SchedulerConfig,
): ResolvedSchedulerConfig {
  const definition = definitionFor(name);
  return readSchedulerConfig(definition, config, className ?? definition.className);
}

/**
 * The scheduler name for a folder config's `_class_name` (e.g. `PNDMScheduler` → `pndm`; the SDE variant when
 * the config says so), or undefined for classes this package does not implement.
 */
export function schedulerNameForClass(
  className: string | undefined,
  config: SchedulerConfig = {},
): SchedulerName | undefined {
  const candidates = (SCHEDULERS as readonly SchedulerDefinition[]).filter((s) => s.className === className);
  const variant = candidates.find((s) => s.matchesFolder?.(config));
  return (variant ?? candidates[0])?.name as SchedulerName | undefined;
}

/** A scheduler for a model folder's own config (the "default" scheduler). */
export function createSchedulerFromFolderConfig(config: SchedulerConfig): Scheduler {
  const name = schedulerNameForClass(config._class_name, config);
  if (!name) {
    throw new InvalidArgument(
      `scheduler class ${JSON.stringify(config._class_name)} is not supported; supported: ${SCHEDULERS.map((s) => s.className).join(', ')}`,
    );
  }
  return createScheduler(name, config);
}
