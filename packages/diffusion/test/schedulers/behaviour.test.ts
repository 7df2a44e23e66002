import { readFileSync } from 'node:fs';
import * as tf from '@tensorflow/tfjs';
import { InvalidArgument } from '@tiffin/core';
import { ConfigError } from '@tiffin/core/internal';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  computeNoiseSchedule,
  createScheduler,
  createSchedulerFromFolderConfig,
  DPMSolverMultistepScheduler,
  EulerDiscreteScheduler,
  GaussianNoise,
  img2imgTimesteps,
  resolveSchedulerConfig,
  SCHEDULER_NAMES,
  type SchedulerConfig,
} from '../../src/schedulers/index.js';
import { roundHalfEven } from '../../src/schedulers/numeric.js';

/** The SD scheduler config (docs/spec/diffusion.md §11.1) minus the class name. */
const SD: SchedulerConfig = {
  beta_end: 0.012,
  beta_schedule: 'scaled_linear',
  beta_start: 0.00085,
  clip_sample: false,
  num_train_timesteps: 1000,
  prediction_type: 'epsilon',
  set_alpha_to_one: false,
  skip_prk_steps: true,
  steps_offset: 1,
  timestep_spacing: 'leading',
};

const fixture = JSON.parse(
  readFileSync(new URL('../fixtures/sd-reference/schedulers.json', import.meta.url), 'utf8'),
) as {
  alphas_cumprod_probe: Record<string, number>;
  cases: Record<string, { config: SchedulerConfig; sigmas?: number[]; scheduler: string }>;
};

const resolved = (config: SchedulerConfig) => resolveSchedulerConfig('ddim', 'DDIMScheduler', config);

beforeAll(async () => {
  await tf.setBackend('cpu');
});

describe('noise schedule (docs/spec/diffusion.md §7)', () => {
  it('SD scaled_linear ᾱ matches the float32 reference probe', () => {
    const { alphasCumprod } = computeNoiseSchedule(resolved(SD));
    // torch's float32 linspace/cumprod are emulated but not bit-reproduced: measured worst relative
    // difference 2.0e-7 (about 2 float32 ulps, at ᾱ_999); indices 0, 1 and 250 are bit-identical.
    for (const [i, v] of Object.entries(fixture.alphas_cumprod_probe)) {
      expect(Math.abs(alphasCumprod[Number(i)] - v) / v).toBeLessThanOrEqual(5e-7);
    }
    // docs/spec/diffusion.md §7 figures: ᾱ_0 = 0.99915, ᾱ_500 = 0.27633, ᾱ_999 = 0.0046601.
    expect(alphasCumprod[0]).toBeCloseTo(0.99915, 5);
    expect(alphasCumprod[500]).toBeCloseTo(0.27633, 5);
    expect(alphasCumprod[999]).toBeCloseTo(0.0046601, 7);
  });

  it('linear and squaredcos_cap_v2 schedules', () => {
    // Derived in float64 Python from the spec formulas (product of 1 - β_i):
    // linear 1e-4..0.02: ᾱ_999 = 4.0358297653756754e-05 (the DDPM schedule);
    // cosine: β_0 = 4.128422482196914e-05, ᾱ_500 = 0.49228517244880304, β_999 capped at 0.999.
    const lin = computeNoiseSchedule(resolved({ beta_schedule: 'linear', beta_start: 1e-4, beta_end: 0.02 }));
    expect(lin.alphasCumprod[999]).toBeCloseTo(4.0358297653756754e-5, 9);
    const cos = computeNoiseSchedule(resolved({ beta_schedule: 'squaredcos_cap_v2' }));
    expect(cos.betas[0]).toBeCloseTo(4.128422482196914e-5, 10);
    expect(cos.betas[999]).toBeCloseTo(0.999, 6);
    expect(cos.alphasCumprod[500]).toBeCloseTo(0.49228517244880304, 6);
    const trained = computeNoiseSchedule(resolved({ trained_betas: Array(1000).fill(0.5) }));
    expect(trained.alphasCumprod[1]).toBe(0.25);
  });

  it('sigmas match the reference for every k-diffusion case', () => {
    let worst = 0;
    for (const c of Object.values(fixture.cases)) {
      if (!c.sigmas) continue;
      const s =
        c.scheduler === 'DPMSolverMultistepScheduler'
          ? new DPMSolverMultistepScheduler(c.config)
          : new EulerDiscreteScheduler(c.config);
      s.setTimesteps(10);
      s.sigmaSchedule.forEach((v, i) => {
        worst = Math.max(worst, Math.abs(v - (c.sigmas as number[])[i]) / Math.max(1, c.sigmas![i]));
      });
    }
    // Measured: ≤ 1e-6 relative (Euler Karras, from the float32 log table); exact elsewhere.
    expect(worst).toBeLessThanOrEqual(1e-6);
    const euler = new EulerDiscreteScheduler({ ...SD, timestep_spacing: 'linspace' });
    euler.setTimesteps(10);
    // docs/spec/diffusion.md §7: σ_999 = 14.6146 (the first linspace sigma), last sigma appended as 0.
    expect(euler.sigmaSchedule[0]).toBeCloseTo(14.6146, 4);
    expect(euler.sigmaSchedule[10]).toBe(0);
  });
});

describe('timesteps (docs/spec/diffusion.md §7.1, 7.4, 7.7)', () => {
  const ts = (name: (typeof SCHEDULER_NAMES)[number], config: SchedulerConfig, n: number) => {
    const s = createScheduler(name, config);
    s.setTimesteps(n);
    return [...s.timesteps];
  };
  it('leading / trailing / linspace', () => {
    expect(ts('ddim', SD, 10)).toEqual([901, 801, 701, 601, 501, 401, 301, 201, 101, 1]);
    expect(ts('ddim', { ...SD, timestep_spacing: 'trailing' }, 10)).toEqual([
      999, 899, 799, 699, 599, 499, 399, 299, 199, 99,
    ]);
    expect(ts('ddim', { ...SD, timestep_spacing: 'linspace' }, 10)).toEqual([
      999, 888, 777, 666, 555, 444, 333, 222, 111, 0,
    ]);
    // Euler keeps the fractional linspace values: linspace(0, 999, 4) = 0, 333, 666, 999 is exact, 7 steps is not.
    expect(ts('euler', { ...SD, timestep_spacing: 'linspace' }, 7)[1]).toBe(Math.fround(832.5));
    expect(ts('ddim', { ...SD, timestep_spacing: 'linspace' }, 7)[1]).toBe(832);
  });
  it('PNDM repeats the second timestep; DPM++ uses N + 1 points', () => {
    expect(ts('pndm', SD, 4)).toEqual([751, 501, 501, 251, 1]);
    expect(ts('dpmpp_2m', { ...SD, timestep_spacing: 'linspace' }, 10)).toEqual([
      999, 899, 799, 699, 599, 500, 400, 300, 200, 100,
    ]);
    expect(ts('dpmpp_2m', SD, 10)).toEqual([901, 811, 721, 631, 541, 451, 361, 271, 181, 91]);
  });
  it('round half to even like numpy', () => {
    expect([0.5, 1.5, 2.5, -0.5, -1.5, 2.4999, 2.5001].map(roundHalfEven)).toEqual([0, 2, 2, -0, -2, 2, 3]);
  });
  it('Euler init noise sigma for SD leading is sqrt(σmax² + 1)', () => {
    const s = createScheduler('euler', SD);
    s.setTimesteps(10);
    expect(s.initNoiseSigma).toBeCloseTo(8.4501, 4);
  });
  it('rejects bad step counts', () => {
    expect(() => createScheduler('ddim', SD).setTimesteps(0)).toThrow(InvalidArgument);
    expect(() => createScheduler('ddim', SD).setTimesteps(1001)).toThrow(InvalidArgument);
  });
});

describe('from_config (docs/spec/diffusion.md §7.8)', () => {
  it('applies class defaults for missing keys and ignores unknown ones', () => {
    const ddim = createScheduler('ddim', { beta_schedule: 'scaled_linear', skip_prk_steps: true, foo: 1 });
    expect(ddim.config.clip_sample).toBe(true);
    expect(ddim.config.set_alpha_to_one).toBe(true);
    expect(ddim.config.timestep_spacing).toBe('leading');
    expect('skip_prk_steps' in ddim.config).toBe(false); // a PNDM key: DDIM does not read it
    expect(createScheduler('euler', SD).config.timestep_spacing).toBe('leading');
    expect(createScheduler('euler', { beta_schedule: 'scaled_linear' }).config.timestep_spacing).toBe(
      'linspace',
    );
    expect(createScheduler('dpmpp_2m', SD).config.steps_offset).toBe(1);
    expect(createScheduler('pndm', {}).config.skip_prk_steps).toBe(false);
  });
  it('picks the class from the folder config', () => {
    expect(createSchedulerFromFolderConfig({ ...SD, _class_name: 'PNDMScheduler' }).name).toBe('pndm');
    expect(() => createSchedulerFromFolderConfig({ _class_name: 'DEISMultistepScheduler' })).toThrow(
      /not supported/,
    );
    const sde = { ...SD, _class_name: 'DPMSolverMultistepScheduler', algorithm_type: 'sde-dpmsolver++' };
    expect(createSchedulerFromFolderConfig(sde).name).toBe('dpmpp_2m_sde');
    expect(createSchedulerFromFolderConfig({ ...sde, algorithm_type: 'dpmsolver++' }).name).toBe('dpmpp_2m');
  });
  it('rejects unknown names and unsupported options clearly', () => {
    expect(() => createScheduler('deis' as 'ddim', SD)).toThrow(InvalidArgument);
    expect(() => createScheduler('ddim', { ...SD, beta_schedule: 'sigmoid' })).toThrow(ConfigError);
    expect(() => createScheduler('ddim', { ...SD, rescale_betas_zero_snr: true })).toThrow(
      /rescale_betas_zero_snr/,
    );
    expect(() => createScheduler('dpmpp_2m', { ...SD, algorithm_type: 'sde-dpmsolver++' })).toThrow(
      /algorithm_type/,
    );
    expect(() => createScheduler('pndm', { ...SD, prediction_type: 'sample' })).toThrow(/prediction_type/);
  });
});

describe('img2img and add_noise (docs/spec/diffusion.md §7.9, 8.2)', () => {
  it('DDIM N = 5, strength 0.6 keeps 401, 201, 1 and add_noise is √ᾱ·x0 + √(1-ᾱ)·ε', () => {
    const s = createScheduler('ddim', SD);
    s.setTimesteps(5);
    const { timesteps, beginIndex } = img2imgTimesteps(s, 5, 0.6);
    expect(timesteps).toEqual([401, 201, 1]);
    expect(beginIndex).toBe(2);
    const a = computeNoiseSchedule(resolved(SD)).alphasCumprod[401];
    const out = s.addNoise(tf.scalar(2), tf.scalar(3), 401);
    expect(out.dataSync()[0]).toBeCloseTo(Math.sqrt(a) * 2 + Math.sqrt(1 - a) * 3, 5);
    out.dispose();
  });
  for (const name of ['euler', 'euler_a', 'dpmpp_2m'] as const) {
    it(`${name}: once stepping has begun, add_noise noises to the timestep about to run (inpainting's blend)`, () => {
      const noised = (s: ReturnType<typeof createScheduler>, t: number) => {
        const out = s.addNoise(tf.scalar(0.5), tf.scalar(1), t);
        const v = out.dataSync()[0];
        out.dispose();
        return v;
      };
      // The timestep's own noise level: a scheduler without a begin index looks the timestep up.
      const own = createScheduler(name, SD);
      own.setTimesteps(5);
      const s = createScheduler(name, SD);
      s.setTimesteps(5);
      const { timesteps } = img2imgTimesteps(s, 5, 0.8);
      // Before the first step: the begin index (img2img's start).
      expect(noised(s, timesteps[0])).toBe(noised(own, timesteps[0]));
      const x = tf.ones([1, 4, 2, 2]);
      const zeros = (shape: number[]) => new Float32Array(shape.reduce((a, b) => a * b, 1));
      const step = s.step(tf.zerosLike(x), timesteps[0], x, { noise: zeros });
      step.prevSample.dispose();
      x.dispose();
      // After it: the next timestep's level, as diffusers' `add_noise` takes its step index.
      expect(noised(s, timesteps[1])).toBe(noised(own, timesteps[1]));
      expect(noised(s, timesteps[1])).not.toBe(noised(own, timesteps[0]));
    });
  }
  it('rejects a strength that leaves no steps', () => {
    const s = createScheduler('euler', SD);
    s.setTimesteps(3);
    expect(() => img2imgTimesteps(s, 3, 0.2)).toThrow(InvalidArgument);
  });
});

describe('stepping contract', () => {
  it('stochastic steps need a noise source; eta is ignored outside DDIM', () => {
    const s = createScheduler('euler_a', SD);
    s.setTimesteps(2);
    const x = tf.ones([1, 4, 2, 2]);
    expect(() => s.step(x, s.timesteps[0], x)).toThrow(/noise/);
    const ddim = createScheduler('ddim', SD);
    ddim.setTimesteps(2);
    expect(() => ddim.step(x, ddim.timesteps[0], x, { eta: 1 })).toThrow(/noise/);
    const a = createScheduler('pndm', SD);
    a.setTimesteps(2);
    const b = createScheduler('pndm', SD);
    b.setTimesteps(2);
    const ra = a.step(x, a.timesteps[0], x).prevSample;
    const rb = b.step(x, b.timesteps[0], x, { eta: 1 }).prevSample;
    expect(ra.dataSync()).toEqual(rb.dataSync());
    tf.dispose([x, ra, rb]);
    a.dispose();
    b.dispose();
  });

  it('a full loop leaves no tensors behind once inputs, outputs and the scheduler are disposed', () => {
    for (const name of SCHEDULER_NAMES) {
      const before = tf.memory().numTensors;
      const s = createScheduler(name, { ...SD, skip_prk_steps: false });
      s.setTimesteps(12);
      const noise = new GaussianNoise(7);
      let x = noise.tensor([1, 4, 2, 2]);
      for (const t of s.timesteps) {
        const xIn = s.scaleModelInput(x, t);
        const m = tf.tanh(xIn);
        const next = s.step(m, t, x, { noise: noise.asSource(), eta: 0.5 }).prevSample;
        tf.dispose([xIn, m, x]);
        x = next;
      }
      x.dispose();
      s.dispose();
      expect(tf.memory().numTensors, name).toBe(before);
    }
  });

  it('a fresh setTimesteps resets the multistep history (same result twice)', () => {
    const s = createScheduler('dpmpp_2m', SD);
    const run = () => {
      s.setTimesteps(4);
      let x = tf.fill([1, 4, 2, 2], 0.3);
      for (const t of s.timesteps) {
        const m = tf.mul(x, 0.1);
        const next = s.step(m, t, x).prevSample;
        tf.dispose([m, x]);
        x = next;
      }
      const out = Array.from(x.dataSync());
      x.dispose();
      return out;
    };
    expect(run()).toEqual(run());
    s.dispose();
  });
});

describe('GaussianNoise (docs/spec/diffusion.md §8.3)', () => {
  it('is reproducible per seed and standard normal', () => {
    const a = new GaussianNoise(42).fill(20000);
    expect(new GaussianNoise(42).fill(20000)).toEqual(a);
    expect(new GaussianNoise(43).fill(8)).not.toEqual(a.slice(0, 8));
    const mean = a.reduce((s, v) => s + v, 0) / a.length;
    const variance = a.reduce((s, v) => s + (v - mean) ** 2, 0) / a.length;
    expect(Math.abs(mean)).toBeLessThan(0.03);
    expect(Math.abs(variance - 1)).toBeLessThan(0.05);
  });
});
