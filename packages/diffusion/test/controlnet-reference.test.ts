import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NCHW_TO_NHWC, transpose } from '../src/latents/host-tensor.js';
import { StableDiffusionPipeline } from '../src/pipeline/pipeline.js';
import type { ControlNetUnit, RgbImage, Text2ImgRequest } from '../src/pipeline/types.js';
import { writeTinyControlNet } from '../src/tiny/write-tiny-controlnet.js';
import { writeTinyPipeline } from '../src/tiny/write-tiny-pipeline.js';
import { detInput, detUniform } from '../src/weights/deterministic.js';
import { type Full, fixture, maxAbsDiff, maxRelativeDiff } from './helpers/fixtures.js';
import { fixtureNoise, type TinyEngine } from './helpers/tiny.js';

/**
 * ControlNet on the tiny SD 1.x folder with two tiny deterministic ControlNets, against diffusers 0.27.2's
 * ControlNetModel + UNet + VAE in the ControlNet pipelines' loop (`controlnet.json`, written by
 * reference/controlnet_reference.py): one net at two conditioning scales, two at once, a guidance window, a picture
 * that must be resized, guess mode, no guidance, img2img. Given embeddings, latents and noise; the 8-bit images must
 * be within one level of diffusers' on both engines, and the net's raw residuals close to diffusers'.
 */

interface Unit {
  model: string;
  picture: { name: string; width: number; height: number };
  conditioning_scale: number;
  guidance_start: number;
  guidance_end: number;
  guess_mode: boolean;
}
interface Case {
  units: Unit[];
  steps: number;
  guidance_scale: number;
  strength: number | null;
  timesteps: number[];
  image_full: Full;
  image_uint8: number[];
}

const fx = fixture('controlnet.json');
const cases = fx.cases as Record<string, Case>;

/** The reference script's `picture`: uint8 floor((u + 1) · 127.5) of det_uniform(name), HWC RGB. */
function picture(name: string, width: number, height: number): RgbImage & { data: Uint8Array } {
  const u = detUniform(name, width * height * 3);
  const data = new Uint8Array(u.length);
  for (let i = 0; i < u.length; i++) data[i] = Math.min(255, Math.max(0, Math.floor((u[i] + 1) * 127.5)));
  return { width, height, data };
}

/** The picture as PNG bytes: the library decodes what a caller would send. */
const png = (p: RgbImage & { data: Uint8Array }): Promise<Buffer> =>
  sharp(p.data, { raw: { width: p.width, height: p.height, channels: 3 } })
    .png()
    .toBuffer();

const embeds = (name: string) => ({
  shape: [1, 77, 32] as [number, number, number],
  data: detInput(name, [1, 77, 32]),
});

describe('ControlNet in the tiny sd1 pipeline matches diffusers (8-bit levels)', () => {
  let root = '';
  const pipes = {} as Record<TinyEngine, StableDiffusionPipeline>;
  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'tiny-controlnet-'));
    const sd = writeTinyPipeline(join(root, 'sd1'), { flavour: 'sd1' });
    const controlnets = {
      a: writeTinyControlNet(join(root, 'a'), { seed: 'a' }),
      b: writeTinyControlNet(join(root, 'b'), { seed: 'b' }),
    };
    for (const backend of ['onnxruntime', 'wasm'] as const)
      pipes[backend] = await StableDiffusionPipeline.fromPretrained(sd, {
        backend,
        controlnets,
        onnx: { cacheDir: join(root, '.graphs') },
        log: () => {},
      });
  }, 240_000);
  afterAll(() => {
    for (const p of Object.values(pipes)) p.dispose();
    rmSync(root, { recursive: true, force: true });
  });

  for (const engine of ['onnxruntime', 'wasm'] as const) {
    for (const [key, c] of Object.entries(cases)) {
      it(`${key} on ${engine}`, async () => {
        const controlnet: ControlNetUnit[] = [];
        for (const u of c.units)
          controlnet.push({
            model: u.model,
            image: await png(picture(u.picture.name, u.picture.width, u.picture.height)),
            conditioning_scale: u.conditioning_scale,
            guidance_start: u.guidance_start,
            guidance_end: u.guidance_end,
            guess_mode: u.guess_mode,
          });
        const guided = c.guidance_scale > 1;
        const request: Text2ImgRequest = {
          prompt_embeds: embeds('pipe/prompt_embeds'),
          ...(guided ? { negative_prompt_embeds: embeds('pipe/negative_prompt_embeds') } : {}),
          height: 32,
          width: 32,
          num_inference_steps: c.steps,
          guidance_scale: c.guidance_scale,
          scheduler: 'euler',
          noise: fixtureNoise(),
          controlnet,
          return_float: true,
        };
        const out =
          c.strength === null
            ? await pipes[engine].text2img({ ...request, latents: detInput('pipe/latents', [1, 4, 16, 16]) })
            : await pipes[engine].img2img({
                ...request,
                image: picture('control/init', 32, 32),
                strength: c.strength,
              });
        expect(out.timesteps).toEqual(c.timesteps);
        const level = maxAbsDiff(out.images[0].data, c.image_uint8);
        const floatErr = maxAbsDiff(out.images[0].float as Float32Array, c.image_full.data);
        console.info(
          `${key} ${engine}: max 8-bit level diff ${level}, float err ${floatErr.toExponential(2)}`,
        );
        expect(level).toBeLessThanOrEqual(1);
      });
    }

    it(`the raw residuals are diffusers' on ${engine}`, async () => {
      // The pipeline's own loaded net (a private field, reached by name in the test).
      const net = pipes[engine]['controlnets'].get('a');
      if (!net) throw new Error('net a not loaded');
      const image = picture('control/a', 32, 32);
      const r = await net.residualsOnHost(
        transpose({ data: detInput('cn/sample', [1, 4, 16, 16]), shape: [1, 4, 16, 16] }, NCHW_TO_NHWC),
        fx.residuals.timestep,
        { data: detInput('pipe/prompt_embeds', [1, 77, 32]), shape: [1, 77, 32] },
        { data: Float32Array.from(image.data, (v) => Math.fround(v / 255)), shape: [1, 32, 32, 3] },
      );
      const ref = [...fx.residuals.down, fx.residuals.mid] as Full[];
      const got = [...r.down, r.mid];
      expect(got).toHaveLength(ref.length);
      ref.forEach((want, k) => {
        const nhwc = transpose({ data: Float32Array.from(want.data), shape: want.shape }, NCHW_TO_NHWC);
        expect(got[k].shape).toEqual(nhwc.shape);
        expect(maxRelativeDiff(nhwc.data, got[k].data)).toBeLessThan(1e-4);
      });
    });
  }
});
