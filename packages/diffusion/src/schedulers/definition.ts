import type { SchedulerConfigSpec } from './config.js';
import type { Scheduler, SchedulerConfig, SharedSchedulerConfig } from './types.js';

/**
 * Everything Tiffin knows about one scheduler, declared in the scheduler's own file and listed once in
 * `registry.ts`: its request name, its diffusers class and config (defaults, keys, checks), and how to
 * make an instance.
 */
export interface SchedulerDefinition<
  Name extends string = string,
  C extends SharedSchedulerConfig = SharedSchedulerConfig,
> extends SchedulerConfigSpec<C> {
  /** The name requests use (`"scheduler": "dpmpp_2m"`). */
  readonly name: Name;
  /** A fresh instance configured from a diffusers config (`Class.from_config(config)`). */
  create(config?: SchedulerConfig): Scheduler;
  /**
   * For a name that shares its class with another (`dpmpp_2m_sde`): whether a folder config of that class is this
   * variant (its `algorithm_type`). The first name of a class is the one a folder gets otherwise.
   */
  readonly matchesFolder?: (config: SchedulerConfig) => boolean;
}

/** Declares a scheduler; the name's literal type flows into `SchedulerName` through the registry. */
export function defineScheduler<const Name extends string, C extends SharedSchedulerConfig>(
  definition: SchedulerDefinition<Name, C>,
): SchedulerDefinition<Name, C> {
  return definition;
}
