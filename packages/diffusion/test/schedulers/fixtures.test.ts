import { readFileSync } from 'node:fs';
import * as tf from '@tensorflow/tfjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createScheduler,
  img2imgTimesteps,
  type SchedulerConfig,
  schedulerNameForClass,
} from '../../src/schedulers/index.js';
import { detInput } from '../../src/weights/deterministic.js';

/**
 * Every case of the diffusers reference run (`schedulers.json`, docs/spec/diffusion.md §13): 10 steps of
 * scale_model_input → dummy model → step on a [1, 4, 4, 4] latent, noise injected as
 * det_input("sched-noise/<k>"), compared per step (t, first scaled input, first 4 values, mean), on
 * the full final latent, and on the img2img block (timesteps after strength 0.6, add_noise of
 * det_input("sched/x0") with det_input("sched/img2img-noise")).
 */

interface Summary {
  t: number;
  model_in_first: number;
  first: number[];
  mean: number;
}
interface Case {
  scheduler: string;
  config: SchedulerConfig;
  step_kwargs: { eta?: number };
  timesteps: number[];
  sigmas?: number[];
  init_noise_sigma: number;
  steps: Summary[];
  final: { shape: number[]; data: number[] };
  img2img: {
    strength: number;
    t_start: number;
    timesteps: number[];
    noisy_first: number[];
    noisy_mean: number;
  };
}
interface Fixture {
  cases: Record<string, Case>;
  steps: number;
  latent_shape: number[];
}

const fixture = JSON.parse(
  readFileSync(new URL('../fixtures/sd-reference/schedulers.json', import.meta.url), 'utf8'),
) as Fixture;

const TOLERANCE = 1e-4;
const errors: Record<string, { final: number; steps: number; img2img: number; timesteps: number }> = {};

/** m(x_in, t) = 0.5 · tanh(x_in) · cos(t/300) + 0.1 · sin(t/70), float32 scalars like torch. */
function dummyModel(xIn: tf.Tensor, t: number): tf.Tensor {
  const c = Math.fround(Math.cos(Math.fround(t / 300)));
  const s = Math.fround(0.1 * Math.fround(Math.sin(Math.fround(t / 70))));
  return tf.tidy(() => tf.add(tf.mul(tf.mul(tf.tanh(xIn), 0.5), c), s));
}

function maxAbs(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
}

beforeAll(async () => {
  await tf.setBackend('cpu');
});

afterAll(() => {
  // The report lists these figures; printed once per run.
  const rows = Object.entries(errors).map(
    ([k, e]) =>
      `${k}: final ${e.final.toExponential(2)}, steps ${e.steps.toExponential(2)}, img2img ${e.img2img.toExponential(2)}, timesteps ${e.timesteps.toExponential(2)}`,
  );
  console.log(`scheduler fixture max abs errors:\n${rows.join('\n')}`);
});

describe('schedulers vs diffusers 0.27.2 reference (schedulers.json)', () => {
  const shape = fixture.latent_shape;
  for (const [key, c] of Object.entries(fixture.cases)) {
    it(key, () => {
      const name = schedulerNameForClass(c.scheduler);
      expect(name, c.scheduler).toBeDefined();
      const scheduler = createScheduler(name!, c.config);
      scheduler.setTimesteps(fixture.steps);
      // Integer schedules match exactly. Euler Karras timesteps are fractional: they come from
      // interpolating in a float32 log-sigma table, and numpy's float32 log differs from
      // Math.fround(Math.log(x)) by an ulp here and there, which moves t by up to ~6e-5 (measured).
      expect(scheduler.timesteps.length).toBe(c.timesteps.length);
      const tsErr = maxAbs(scheduler.timesteps, c.timesteps);
      expect(tsErr).toBeLessThanOrEqual(
        c.config.use_karras_sigmas && c.scheduler.startsWith('Euler') ? 1e-4 : 0,
      );
      expect(Math.abs(scheduler.initNoiseSigma - c.init_noise_sigma)).toBeLessThanOrEqual(
        1e-6 * c.init_noise_sigma,
      );

      let draw = 0;
      const noise = (s: number[]) => detInput(`sched-noise/${draw++}`, s);
      const start = tf.tensor(detInput('sched/latents', shape), shape);
      let x = tf.mul(start, scheduler.initNoiseSigma);
      start.dispose();
      let stepErr = 0;
      scheduler.timesteps.forEach((t, i) => {
        const ref = c.steps[i];
        expect(Math.abs(t - ref.t)).toBeLessThanOrEqual(tsErr);
        const xIn = scheduler.scaleModelInput(x, t);
        stepErr = Math.max(stepErr, Math.abs(xIn.dataSync()[0] - ref.model_in_first));
        const m = dummyModel(xIn, t);
        const { prevSample } = scheduler.step(m, t, x, { noise, eta: c.step_kwargs.eta ?? 0 });
        xIn.dispose();
        m.dispose();
        x.dispose();
        x = prevSample;
        const data = Float32Array.from(x.dataSync());
        stepErr = Math.max(stepErr, maxAbs(data.slice(0, 4), ref.first));
        stepErr = Math.max(stepErr, Math.abs(data.reduce((a, b) => a + b, 0) / data.length - ref.mean));
      });
      const finalErr = maxAbs(x.dataSync(), c.final.data);
      x.dispose();
      scheduler.dispose();

      // img2img: strength truncation, begin index and add_noise.
      const img = createScheduler(name!, c.config);
      img.setTimesteps(fixture.steps);
      const { timesteps, beginIndex } = img2imgTimesteps(img, fixture.steps, c.img2img.strength);
      expect(beginIndex).toBe(c.img2img.t_start);
      expect(maxAbs(timesteps, c.img2img.timesteps)).toBeLessThanOrEqual(tsErr);
      const x0 = tf.tensor(detInput('sched/x0', shape), shape);
      const eps = tf.tensor(detInput('sched/img2img-noise', shape), shape);
      const noisy = img.addNoise(x0, eps, timesteps[0]);
      const nd = Float32Array.from(noisy.dataSync());
      const imgErr = Math.max(
        maxAbs(nd.slice(0, 8), c.img2img.noisy_first),
        Math.abs(nd.reduce((a, b) => a + b, 0) / nd.length - c.img2img.noisy_mean),
      );
      tf.dispose([x0, eps, noisy]);

      errors[key] = { final: finalErr, steps: stepErr, img2img: imgErr, timesteps: tsErr };
      expect(finalErr).toBeLessThanOrEqual(TOLERANCE);
      expect(stepErr).toBeLessThanOrEqual(TOLERANCE);
      expect(imgErr).toBeLessThanOrEqual(TOLERANCE);
    });
  }
});
