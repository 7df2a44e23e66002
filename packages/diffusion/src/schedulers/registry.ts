import { ddim } from './ddim.js';
import type { SchedulerDefinition } from './definition.js';
import { dpmSolverMultistep } from './dpm-solver.js';
import { dpmSolverMultistepSde, dpmSolverMultistepSdeHeun } from './dpm-solver-sde.js';
import { dpmSolverSde } from './dpmpp-sde.js';
import { euler } from './euler.js';
import { eulerAncestral } from './euler-ancestral.js';
import { heun } from './heun.js';
import { kdpm2 } from './kdpm2.js';
import { kdpm2Ancestral } from './kdpm2-ancestral.js';
import { lcm } from './lcm.js';
import { lms } from './lms.js';
import { pndm } from './pndm.js';
import { uniPC } from './unipc.js';

/**
 * Every scheduler this package implements, in the order docs and messages list them. Adding a scheduler
 * is its own file (class + `defineScheduler`) and one entry here: an explicit list rather than
 * import-time side effects, so a bundler cannot drop a registration.
 */
export const SCHEDULERS = [
  pndm,
  ddim,
  euler,
  eulerAncestral,
  dpmSolverMultistep,
  lcm,
  uniPC,
  dpmSolverMultistepSdeHeun,
  dpmSolverMultistepSde,
  dpmSolverSde,
  heun,
  lms,
  kdpm2,
  kdpm2Ancestral,
] as const satisfies readonly SchedulerDefinition[];

/** Scheduler names accepted by the service and by `createScheduler`. */
export type SchedulerName = (typeof SCHEDULERS)[number]['name'];

/** All scheduler names, in a stable order (for validation messages and docs). */
export const SCHEDULER_NAMES: readonly SchedulerName[] = SCHEDULERS.map((s) => s.name);

/**
 * diffusers class name behind each scheduler name (what `_class_name` says in a model folder). Three names share
 * DPMSolverMultistepScheduler: `dpmpp_2m` and its SDE algorithm, `dpmpp_2m_sde` (and `dpmpp_2m_sde_heun`).
 */
export const SCHEDULER_CLASS_NAMES: Readonly<Record<SchedulerName, string>> = Object.fromEntries(
  SCHEDULERS.map((s) => [s.name, s.className]),
) as Record<SchedulerName, string>;

/** The definition registered under `name`, or undefined. */
export function schedulerDefinition(name: string): SchedulerDefinition | undefined {
  return (SCHEDULERS as readonly SchedulerDefinition[]).find((s) => s.name === name);
}

/** The schedulers whose class takes Karras sigmas (`use_karras_sigmas`), in registry order. */
export const KARRAS_SCHEDULER_NAMES: readonly SchedulerName[] = SCHEDULERS.filter(
  (s) => 'use_karras_sigmas' in s.defaults,
).map((s) => s.name);
