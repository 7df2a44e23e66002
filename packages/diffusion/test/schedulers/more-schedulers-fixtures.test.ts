import { describe, expect, it } from 'vitest';
import type { HostTensor } from '../../src/latents/host-tensor.js';
import { createScheduler, type SchedulerName } from '../../src/schedulers/index.js';
import { detInput } from '../../src/weights/deterministic.js';
import { closedFormModel, type Full, fixture, maxAbsDiff } from '../helpers/fixtures.js';

/**
 * The schedulers behind A1111's sampler names against diffusers 0.27.2 (`more_schedulers.json`, written by
 * reference/more_schedulers_reference.py): UniPC (bh2, bh1, order 3, v prediction), Heun, LMS, KDPM2, KDPM2 ancestral,
 * DPM++ SDE and DPM++ 2M SDE, with and without Karras sigmas, on the closed-form model. Draw k of a run (randn and
 * the SDE noise sampler alike) is det_input("sched-noise/<k>"); the latent is compared after every model call.
 */

interface Case {
  scheduler: SchedulerName;
  config: Record<string, unknown>;
  steps: number;
  timesteps: number[];
  sigmas: number[];
  init_noise_sigma: number;
  draws: number;
  latents: number[][];
  final: Full;
}

const cases = fixture('more_schedulers.json').schedulers as Record<string, Case>;
const f = Math.fround;

describe('A1111 samplers’ schedulers vs diffusers 0.27.2 (more_schedulers.json)', () => {
  for (const [key, c] of Object.entries(cases)) {
    it(key, () => {
      const scheduler = createScheduler(c.scheduler, c.config) as ReturnType<typeof createScheduler> & {
        sigmaSchedule: readonly number[];
      };
      scheduler.setTimesteps(c.steps);
      expect(scheduler.timesteps.length).toBe(c.timesteps.length);
      // Intermediate timesteps come from sigma_to_t of float32 sigmas: within a thousandth of a training step.
      expect(maxAbsDiff(scheduler.timesteps, c.timesteps)).toBeLessThan(1e-3);
      // The training table's largest sigma is 2 float32 ulps off torch's cumprod (as for Euler, fewstep.json).
      const sigmas = c.sigmas;
      expect(maxAbsDiff(scheduler.sigmaSchedule, sigmas)).toBeLessThanOrEqual(2e-7 * Math.max(...sigmas));
      expect(Math.abs(scheduler.initNoiseSigma - c.init_noise_sigma)).toBeLessThanOrEqual(
        1e-6 * c.init_noise_sigma,
      );
      let draws = 0;
      const noise = (shape: number[]) => detInput(`sched-noise/${draws++}`, shape);
      const shape = [1, 4, 4, 4];
      let x: HostTensor = {
        data: detInput('sched/latents', shape).map((v) => f(v * scheduler.initNoiseSigma)),
        shape,
      };
      let worst = 0;
      scheduler.timesteps.forEach((t, i) => {
        const m = closedFormModel(scheduler.scaleModelInput(x, t), t);
        x = scheduler.step(m, t, x, { noise }).prevSample;
        worst = Math.max(worst, maxAbsDiff(x.data, c.latents[i]));
      });
      expect(draws).toBe(c.draws);
      const err = maxAbsDiff(x.data, c.final.data);
      console.info(
        `${key}: final latent max abs err ${err.toExponential(2)}, worst step ${worst.toExponential(2)}`,
      );
      expect(worst).toBeLessThan(1e-4);
    });
  }
});
