import { readdirSync, readFileSync } from 'node:fs';
import { ConfigError } from '@tiffin/core/internal';
import { describe, expect, it } from 'vitest';
import {
  createScheduler,
  createSchedulerFromFolderConfig,
  resolveSchedulerConfig,
  SCHEDULER_CLASS_NAMES,
  SCHEDULER_NAMES,
  schedulerNameForClass,
} from '../../src/schedulers/index.js';
import { SCHEDULERS } from '../../src/schedulers/registry.js';

const dir = new URL('../../src/schedulers/', import.meta.url);

describe('scheduler registry', () => {
  it('lists every scheduler file that defines one, once', async () => {
    // A scheduler file declares itself with `export const x = defineScheduler(`; the registry's explicit
    // list must hold that very object.
    const files = readdirSync(dir).filter((f) => f.endsWith('.ts') && f !== 'definition.ts');
    let declared = 0;
    for (const file of files) {
      const source = readFileSync(new URL(file, dir), 'utf8');
      for (const [, exported] of source.matchAll(/export const (\w+) = defineScheduler\(/g)) {
        const module = (await import(new URL(file, dir).href)) as Record<string, unknown>;
        expect(SCHEDULERS, `${file}: ${exported}`).toContain(module[exported]);
        declared += 1;
      }
    }
    expect(declared).toBe(SCHEDULERS.length);
    expect(new Set(SCHEDULER_NAMES).size).toBe(SCHEDULER_NAMES.length);
    // A class behind several names (DPM++ 2M and its SDE algorithms) marks the variants a folder config selects.
    const variants = SCHEDULERS.filter((s) => 'matchesFolder' in s).length;
    expect(new Set(Object.values(SCHEDULER_CLASS_NAMES)).size).toBe(SCHEDULER_NAMES.length - variants);
  });

  it('keeps the public names and order', () => {
    expect(SCHEDULER_NAMES).toEqual([
      'pndm',
      'ddim',
      'euler',
      'euler_a',
      'dpmpp_2m',
      'lcm',
      'unipc',
      'dpmpp_2m_sde_heun',
      'dpmpp_2m_sde',
      'dpmpp_sde',
      'heun',
      'lms',
      'kdpm2',
      'kdpm2_a',
    ]);
    expect(SCHEDULER_CLASS_NAMES.dpmpp_2m).toBe('DPMSolverMultistepScheduler');
  });

  it('each definition makes its own class, reads only its own keys and round-trips its class name', () => {
    for (const definition of SCHEDULERS) {
      const scheduler = createScheduler(definition.name, {});
      expect(scheduler.name).toBe(definition.name);
      expect(scheduler.className).toBe(definition.className);
      expect(Object.keys(scheduler.config).sort()).toEqual(Object.keys(definition.defaults).sort());
      // A variant's folder config names it (dpmpp_2m_sde: algorithm_type sde-dpmsolver++).
      const folder =
        'matchesFolder' in definition
          ? {
              algorithm_type: 'sde-dpmsolver++',
              solver_type: definition.name.endsWith('_heun') ? 'heun' : undefined,
            }
          : {};
      expect(schedulerNameForClass(definition.className, folder)).toBe(definition.name);
      expect(createSchedulerFromFolderConfig({ ...folder, _class_name: definition.className }).name).toBe(
        definition.name,
      );
      // The shared checks apply to every class.
      expect(() => createScheduler(definition.name, { beta_schedule: 'sigmoid' })).toThrow(ConfigError);
      expect(() => createScheduler(definition.name, { num_train_timesteps: 0 })).toThrow(
        /num_train_timesteps/,
      );
      expect(() => createScheduler(definition.name, { trained_betas: JSON.parse('[0.1, "x"]') })).toThrow(
        /trained_betas/,
      );
      expect(() => createScheduler(definition.name, { thresholding: true })).toThrow(/thresholding/);
    }
  });

  it('class-specific checks stay with their class', () => {
    // DDIM does not read solver_order, so a value DPM++ refuses is ignored there, as diffusers does.
    expect(createScheduler('ddim', { solver_order: 7 }).config).not.toHaveProperty('solver_order');
    expect(() => createScheduler('dpmpp_2m', { solver_order: 7 })).toThrow(/solver_order/);
    expect(() => createScheduler('dpmpp_2m', { use_lu_lambdas: true })).toThrow(/use_lu_lambdas/);
    expect(() => createScheduler('dpmpp_2m', { lambda_min_clipped: -5 })).toThrow(/lambda_min_clipped/);
    expect(() => createScheduler('euler', { interpolation_type: 'log_linear' })).toThrow(
      /interpolation_type/,
    );
    expect(createScheduler('euler_a', { interpolation_type: 'log_linear' }).config).not.toHaveProperty(
      'interpolation_type',
    );
    // A null in a folder config means the default.
    expect(createScheduler('ddim', { clip_sample: null }).config.clip_sample).toBe(true);
    // The class name only changes messages.
    expect(() => resolveSchedulerConfig('ddim', 'MyDDIM', { beta_schedule: 'x' })).toThrow(/^MyDDIM: /);
  });
});
