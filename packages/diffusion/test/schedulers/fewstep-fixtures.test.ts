import { describe, expect, it } from 'vitest';
import type { HostTensor } from '../../src/latents/host-tensor.js';
import { createScheduler, type SchedulerName } from '../../src/schedulers/index.js';
import { detInput } from '../../src/weights/deterministic.js';
import { closedFormModel, type Full, fixture, maxAbsDiff } from '../helpers/fixtures.js';

/**
 * The few-step schedulers against diffusers 0.27.2 (`fewstep.json`, written by reference/fewstep_reference.py):
 * LCMScheduler at 1 and 4 steps (ε and v, another `original_inference_steps`), trailing Euler and Euler ancestral,
 * DPM++ 2M with Karras sigmas. The loop is schedulers.json's: scale_model_input → closed-form model → step on
 * det_input("sched/latents") × init_noise_sigma, draw k of a stochastic step det_input("sched-noise/<k>").
 */

interface Case {
  scheduler: SchedulerName;
  config: Record<string, unknown>;
  steps: number;
  timesteps: number[];
  init_noise_sigma: number;
  final: Full;
}

const cases = fixture('fewstep.json').schedulers as Record<string, Case>;
const f = Math.fround;

describe('few-step schedulers vs diffusers 0.27.2 (fewstep.json)', () => {
  for (const [key, c] of Object.entries(cases)) {
    it(key, () => {
      const scheduler = createScheduler(c.scheduler, c.config);
      scheduler.setTimesteps(c.steps);
      expect(scheduler.timesteps.length).toBe(c.timesteps.length);
      expect(maxAbsDiff(scheduler.timesteps, c.timesteps)).toBeLessThanOrEqual(0);
      expect(Math.abs(scheduler.initNoiseSigma - c.init_noise_sigma)).toBeLessThanOrEqual(
        1e-6 * c.init_noise_sigma,
      );
      let draw = 0;
      const noise = (shape: number[]) => detInput(`sched-noise/${draw++}`, shape);
      const shape = [1, 4, 4, 4];
      let x: HostTensor = {
        data: detInput('sched/latents', shape).map((v) => f(v * scheduler.initNoiseSigma)),
        shape,
      };
      for (const t of scheduler.timesteps) {
        const m = closedFormModel(scheduler.scaleModelInput(x, t), t);
        x = scheduler.step(m, t, x, { noise }).prevSample;
      }
      const err = maxAbsDiff(x.data, c.final.data);
      console.info(`${key}: final latent max abs err ${err.toExponential(2)}`);
      expect(err).toBeLessThan(1e-4);
    });
  }

  it('LCM draws no noise after its last step (one step draws none at all)', () => {
    const s = createScheduler('lcm');
    s.setTimesteps(1);
    const x: HostTensor = { data: new Float32Array(4), shape: [1, 1, 2, 2] };
    // No noise source given: a draw would throw.
    expect(() => s.step(x, s.timesteps[0], x)).not.toThrow();
  });

  it('LCM refuses more steps than its original_inference_steps, like diffusers', () => {
    const s = createScheduler('lcm', { original_inference_steps: 8 });
    expect(() => s.setTimesteps(9)).toThrow(/original_inference_steps/);
    expect(() => createScheduler('lcm', { original_inference_steps: 0 })).toThrow(/original_inference_steps/);
  });
});
