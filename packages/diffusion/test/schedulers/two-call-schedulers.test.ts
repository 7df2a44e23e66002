import { ConfigError } from '@tiffin/core/internal';
import { describe, expect, it } from 'vitest';
import type { HostTensor } from '../../src/latents/host-tensor.js';
import { BrownianTree } from '../../src/schedulers/brownian-tree.js';
import { createScheduler, img2imgTimesteps, type SchedulerName } from '../../src/schedulers/index.js';
import { detInput } from '../../src/weights/deterministic.js';
import { closedFormModel } from '../helpers/fixtures.js';

/**
 * The schedulers behind A1111's sampler names beyond their diffusers fixtures: order and img2img start of the
 * two-call classes, the options they refuse as diffusers cannot run them, the noise they need, and the Brownian
 * tree DPM++ SDE draws from in the service (docs/spec/diffusion.md §7.9, §7.10, §8.3).
 */

const SD = { beta_schedule: 'scaled_linear', beta_start: 0.00085, beta_end: 0.012, steps_offset: 1 };
const shape = [1, 2, 2, 2];
const sample = (): HostTensor => ({ data: detInput('two-call/x', shape), shape });

function mean(values: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < values.length; i++) s += values[i];
  return s / values.length;
}

describe('two-call schedulers (Heun, KDPM2, KDPM2 ancestral, DPM++ SDE)', () => {
  const twoCall: SchedulerName[] = ['heun', 'kdpm2', 'kdpm2_a', 'dpmpp_sde'];

  it('have order 2 and 2N − 1 timesteps; img2img starts at start · 2 and noises to that sigma', () => {
    for (const name of twoCall) {
      const s = createScheduler(name, SD) as ReturnType<typeof createScheduler> & {
        sigmaSchedule: readonly number[];
      };
      s.setTimesteps(5);
      expect(s.order, name).toBe(2);
      expect(s.timesteps.length, name).toBe(9);
      const { timesteps, beginIndex } = img2imgTimesteps(s, 5, 0.6);
      expect(beginIndex, name).toBe(4);
      expect(timesteps, name).toEqual(s.timesteps.slice(4));
      const zero: HostTensor = { data: new Float32Array(8), shape };
      const noised = s.addNoise(zero, sample(), timesteps[0]);
      expect(noised.data[0], name).toBeCloseTo(sample().data[0] * s.sigmaSchedule[4], 5);
    }
  });

  it('one-call schedulers keep order 1', () => {
    for (const name of ['unipc', 'lms', 'dpmpp_2m_sde'] as const) expect(createScheduler(name).order).toBe(1);
  });

  it('refuse what diffusers 0.27.2 cannot run', () => {
    for (const name of ['kdpm2', 'kdpm2_a', 'dpmpp_sde'] as const) {
      expect(() => createScheduler(name, { prediction_type: 'sample' })).toThrow(/prediction_type/);
    }
    expect(createScheduler('heun', { prediction_type: 'sample' }).config.prediction_type).toBe('sample');
    expect(() => createScheduler('dpmpp_2m_sde', { solver_order: 3 })).toThrow(ConfigError);
    expect(() => createScheduler('dpmpp_sde', { noise_sampler_seed: 3 })).toThrow(/noise_sampler_seed/);
    expect(() => createScheduler('unipc', { solver_p: {} })).toThrow(/solver_p/);
    expect(() => createScheduler('unipc', { solver_type: 'bh3' })).toThrow(/solver_type/);
    // diffusers maps DPM-Solver's solver types to bh2, and dpmpp_2m_sde is SDE whatever the folder says.
    expect(createScheduler('unipc', { solver_type: 'midpoint' }).config.solver_type).toBe('bh2');
    expect(createScheduler('dpmpp_2m_sde', { algorithm_type: 'dpmsolver++' }).config.algorithm_type).toBe(
      'sde-dpmsolver++',
    );
    const heun = createScheduler('dpmpp_2m_sde_heun', { solver_type: 'midpoint' }).config;
    expect([heun.algorithm_type, heun.solver_type]).toEqual(['sde-dpmsolver++', 'heun']);
  });

  it('the stochastic ones need noise; DPM++ SDE takes the Brownian noise when given', () => {
    for (const name of ['kdpm2_a', 'dpmpp_sde', 'dpmpp_2m_sde'] as const) {
      const s = createScheduler(name, SD);
      s.setTimesteps(3);
      const t = s.timesteps[0];
      expect(() => s.step(closedFormModel(s.scaleModelInput(sample(), t), t), t, sample()), name).toThrow(
        /noise/,
      );
    }
    const asked: Array<[number, number]> = [];
    const s = createScheduler('dpmpp_sde', SD);
    s.setTimesteps(3);
    const brownian = (sh: number[]) => (from: number, to: number) => {
      asked.push([from, to]);
      return { data: new Float32Array(sh.reduce((a, b) => a * b, 1)), shape: sh };
    };
    let x = sample();
    for (const t of s.timesteps)
      x = s.step(closedFormModel(s.scaleModelInput(x, t), t), t, x, { brownian }).prevSample;
    // Two intervals a step but the last (an Euler step to 0), each from the larger sigma to the smaller.
    expect(asked.length).toBe(4);
    for (const [from, to] of asked) expect(from).toBeGreaterThan(to);
  });
});

describe('Brownian tree (DPM++ SDE noise, docs/spec/diffusion.md §8.3)', () => {
  it('gives an interval the same draws whatever was asked before, and they add up', () => {
    const a = new BrownianTree('seed-1', 0.03, 14.6, 64);
    const b = new BrownianTree('seed-1', 0.03, 14.6, 64);
    b.increment(0.5, 7);
    b.increment(3, 2);
    expect(b.increment(4, 1)).toEqual(a.increment(4, 1));
    const w = (t: number) => a.value(t);
    const whole = w(4).map((v, i) => v - w(1)[i]);
    const parts = w(4).map((v, i) => v - w(2.5)[i] + (w(2.5)[i] - w(1)[i]));
    for (let i = 0; i < 64; i++) expect(parts[i]).toBeCloseTo(whole[i], 5);
    expect(new BrownianTree('seed-2', 0.03, 14.6, 64).increment(4, 1)).not.toEqual(a.increment(4, 1));
  });

  it('normalised increments are standard normal, independent across disjoint intervals', () => {
    const tree = new BrownianTree('stats', 0.03, 14.6, 20000);
    const z1 = tree.increment(9, 6);
    const z2 = tree.increment(6, 0.5);
    expect(Math.abs(mean(z1))).toBeLessThan(0.03);
    expect(Math.abs(mean(z1.map((v) => v * v)) - 1)).toBeLessThan(0.05);
    expect(Math.abs(mean(z2.map((v) => v * v)) - 1)).toBeLessThan(0.05);
    expect(Math.abs(mean(z1.map((v, i) => v * z2[i])))).toBeLessThan(0.03);
  });
});
