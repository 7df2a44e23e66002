import { ConfigError } from '@tiffin/core/internal';
import { defineScheduler, type SchedulerDefinition } from './definition.js';
import {
  DPM_SOLVER_DEFAULTS,
  type DPMSolverConfig,
  DPMSolverMultistepScheduler,
  validateDpmSolver,
} from './dpm-solver.js';
import type { SchedulerConfig } from './types.js';

/** The SDE algorithm whatever the folder's config says; diffusers 0.27.2 has no third-order SDE update. */
function validateSde(resolved: DPMSolverConfig, given: SchedulerConfig, className: string): void {
  resolved.algorithm_type = 'sde-dpmsolver++';
  validateDpmSolver(resolved, given, className);
  if (resolved.solver_order === 3) {
    throw new ConfigError(
      `${className}: solver_order 3 is not supported with algorithm_type sde-dpmsolver++`,
    );
  }
}

const isSde = (config: SchedulerConfig) => config.algorithm_type === 'sde-dpmsolver++';

/**
 * `dpmpp_2m_sde_heun` (docs/spec/diffusion.md §7.7): DPMSolverMultistepScheduler with algorithm_type
 * "sde-dpmsolver++" and solver_type "heun" (A1111's DPM++ 2M SDE Heun). Listed in `registry.ts` before
 * `dpmpp_2m_sde`, so a folder config with both keys names it.
 */
export const dpmSolverMultistepSdeHeun = defineScheduler({
  name: 'dpmpp_2m_sde_heun',
  className: 'DPMSolverMultistepScheduler',
  defaults: DPM_SOLVER_DEFAULTS,
  validate(resolved, given, className) {
    validateSde(resolved, given, className);
    resolved.solver_type = 'heun';
  },
  matchesFolder: (config) => isSde(config) && config.solver_type === 'heun',
  create: (config): DPMSolverMultistepScheduler =>
    new DPMSolverMultistepScheduler(
      config,
      dpmSolverMultistepSdeHeun as SchedulerDefinition<string, DPMSolverConfig>,
    ),
});

/**
 * `dpmpp_2m_sde` (docs/spec/diffusion.md §7.7): DPMSolverMultistepScheduler with algorithm_type "sde-dpmsolver++",
 * whatever the folder's config says; the other keys as `dpmpp_2m` reads them. Listed in `registry.ts`.
 */
export const dpmSolverMultistepSde = defineScheduler({
  name: 'dpmpp_2m_sde',
  className: 'DPMSolverMultistepScheduler',
  defaults: DPM_SOLVER_DEFAULTS,
  validate: validateSde,
  matchesFolder: isSde,
  create: (config): DPMSolverMultistepScheduler =>
    new DPMSolverMultistepScheduler(
      config,
      dpmSolverMultistepSde as SchedulerDefinition<string, DPMSolverConfig>,
    ),
});
