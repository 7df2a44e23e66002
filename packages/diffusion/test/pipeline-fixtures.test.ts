import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StableDiffusionPipeline } from '../src/pipeline/pipeline.js';
import type { SchedulerName } from '../src/schedulers/registry.js';
import { detInput } from '../src/weights/deterministic.js';
import { type Full, fixture, maxAbsDiff, summaryError } from './helpers/fixtures.js';
import { fixtureNoise, openTinyPipeline, tinyDir } from './helpers/tiny.js';

const SCHEDULERS: Record<string, SchedulerName | undefined> = {
  default: undefined,
  ddim: 'ddim',
  pndm: 'pndm',
  euler: 'euler',
  euler_a: 'euler_a',
  dpmpp_2m: 'dpmpp_2m',
};

for (const [flavour, backend] of [
  ['sd1', 'wasm'],
  ['sd2', 'wasm'],
  ['sd1', 'onnxruntime'],
  ['sd2', 'onnxruntime'],
] as const) {
  describe(`tiny ${flavour} pipeline matches diffusers (${backend})`, () => {
    const fx = fixture(`pipeline_${flavour}.json`);
    let dir: string;
    let pipe: StableDiffusionPipeline;
    beforeAll(async () => {
      dir = tinyDir(flavour);
      pipe = await openTinyPipeline(dir, backend);
    }, 180_000);
    afterAll(() => {
      pipe?.dispose();
      rmSync(dir, { recursive: true, force: true });
    });

    for (const [key, scheduler] of Object.entries(SCHEDULERS)) {
      it(`text2img with ${key} scheduler`, async () => {
        const ref = fx.txt2img[key];
        const out = await pipe.text2img({
          prompt: fx.prompt,
          negative_prompt: fx.negative_prompt,
          height: 32,
          width: 32,
          num_inference_steps: 4,
          guidance_scale: 7.5,
          scheduler,
          latents: detInput('pipe/latents', [1, 4, 16, 16]),
          noise: fixtureNoise(),
          return_float: true,
          return_latents: key === 'default',
        });
        expect(out.timesteps).toEqual(ref.timesteps);
        const img = out.images[0].float as Float32Array;
        const err = ref.image_full
          ? maxAbsDiff(img, (ref.image_full as Full).data)
          : summaryError(img, ref.image);
        console.info(`${flavour} ${backend} txt2img ${key} image max abs err ${err.toExponential(2)}`);
        expect(err).toBeLessThan(1e-3);
        if (key === 'default') {
          const latErr = maxAbsDiff(out.latents?.data ?? [], (ref.final_latents as Full).data);
          console.info(`${flavour} ${backend} txt2img final latents max abs err ${latErr.toExponential(2)}`);
          expect(latErr).toBeLessThan(1e-3);
          expect(out.images[0].data[0]).toBe(Math.round(img[0] * 255));
        }
      });
    }

    it('text2img from prompt embeddings without guidance', async () => {
      const out = await pipe.text2img({
        prompt: '',
        prompt_embeds: { shape: [1, 77, 32], data: detInput('pipe/prompt_embeds', [1, 77, 32]) },
        height: 32,
        width: 32,
        num_inference_steps: 3,
        guidance_scale: 1,
        latents: detInput('pipe/latents', [1, 4, 16, 16]),
        noise: fixtureNoise(),
        return_float: true,
      });
      const err = summaryError(out.images[0].float as Float32Array, fx.txt2img_embeds_nocfg.image);
      console.info(`${flavour} ${backend} txt2img embeds no-cfg err ${err.toExponential(2)}`);
      expect(err).toBeLessThan(1e-3);
    });

    for (const key of ['default', 'euler', 'dpmpp_2m']) {
      it(`img2img with ${key} scheduler`, async () => {
        const ref = fx.img2img[key];
        // The harness passes an HWC float image in [0, 1].
        const init = detInput('pipe/init_image', [1, 32, 32, 3], 0.25).map((v) => v + 0.5);
        const out = await pipe.img2img({
          prompt: fx.prompt,
          negative_prompt: fx.negative_prompt,
          image: { width: 32, height: 32, data: init },
          strength: 0.6,
          num_inference_steps: 5,
          guidance_scale: 7.5,
          scheduler: SCHEDULERS[key],
          noise: fixtureNoise(),
          return_float: true,
        });
        const all: number[] = ref.timesteps_all;
        expect(all.slice(all.length - out.timesteps.length)).toEqual(out.timesteps);
        const img = out.images[0].float as Float32Array;
        const err = ref.image_full
          ? maxAbsDiff(img, (ref.image_full as Full).data)
          : summaryError(img, ref.image);
        console.info(`${flavour} ${backend} img2img ${key} image max abs err ${err.toExponential(2)}`);
        expect(err).toBeLessThan(1e-3);
      });
    }
  });
}
