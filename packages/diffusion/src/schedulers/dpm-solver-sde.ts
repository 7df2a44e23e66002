import { ConfigError } from '@tiffin/core/internal';
import { defineScheduler } from './definition.js';
import { DPM_SOLVER_DEFAULTS, DPMSolverMultistepScheduler, validateDpmSolver } from './dpm-solver.js';
import type { Scheduler } from './types.js';

/**
 * `dpmpp_2m_sde` (docs/spec/diffusion.md §7.7): DPMSolverMultistepScheduler with algorithm_type "sde-dpmsolver++",
 * whatever the folder's config says; the other keys as `dpmpp_2m` reads them. Listed in `registry.ts`.
 */
export const dpmSolverMultistepSde = defineScheduler({
  name: 'dpmpp_2m_sde',
  className: 'DPMSolverMultistepScheduler',
  defaults: DPM_SOLVER_DEFAULTS,
  validate(resolved, given, className) {
    resolved.algorithm_type = 'sde-dpmsolver++';
    validateDpmSolver(resolved, given, className);
    // diffusers 0.27.2 has no third-order SDE update.
    if (resolved.solver_order === 3) {
      throw new ConfigError(
        `${className}: solver_order 3 is not supported with algorithm_type sde-dpmsolver++`,
      );
    }
  },
  matchesFolder: (config) => config.algorithm_type === 'sde-dpmsolver++',
  create: (config): Scheduler => new DPMSolverMultistepScheduler(config, dpmSolverMultistepSde),
});
