import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StableDiffusionPipeline } from '../src/pipeline/pipeline.js';
import type { MaskImage, RgbImage } from '../src/pipeline/types.js';
import type { SchedulerName } from '../src/schedulers/registry.js';
import { writeTinyPipeline } from '../src/tiny/write-tiny-pipeline.js';
import { detInput } from '../src/weights/deterministic.js';
import { type Full, fixture, maxAbsDiff } from './helpers/fixtures.js';
import { fixtureNoise, openTinyPipeline, type TinyEngine } from './helpers/tiny.js';

/**
 * Inpainting on the tiny SD 1.x folders against diffusers 0.27.2's `StableDiffusionInpaintPipeline` (`inpaint.json`,
 * written by reference/inpaint_reference.py): an inpainting UNet (9 input channels) and an ordinary one (4, masked
 * latent blending), PNDM / DDIM / Euler, strength 1 and below, with and without guidance, a grey-edged mask as grey
 * levels and as RGB. Same picture, mask, prompt embeddings and noise draws; every 8-bit pixel must be within one level
 * of diffusers' on both engines.
 */

interface InpaintCase {
  unet: 'inpainting' | 'blending';
  scheduler: SchedulerName;
  num_inference_steps: number;
  strength: number;
  guidance_scale: number;
  mask_mode: 'L' | 'RGB';
  timesteps: number[];
  final_latents: Full;
  image_uint8: number[];
}

interface InpaintFixture {
  inputs: { width: number; height: number; image_rgb: number[]; mask_l: number[]; mask_rgb: number[] };
  cases: Record<string, InpaintCase>;
}

const fx = fixture('inpaint.json') as InpaintFixture;
const { width, height } = fx.inputs;
const image: RgbImage = { width, height, data: Uint8Array.from(fx.inputs.image_rgb) };
const masks: Record<InpaintCase['mask_mode'], MaskImage> = {
  L: { width, height, data: Uint8Array.from(fx.inputs.mask_l) },
  RGB: { width, height, data: Uint8Array.from(fx.inputs.mask_rgb) },
};
const embeds = (name: string) => ({
  shape: [1, 77, 32] as [number, number, number],
  data: detInput(name, [1, 77, 32]),
});

describe('inpainting matches diffusers 0.27.2 (tiny sd1, 8-bit levels)', () => {
  const dirs: string[] = [];
  const pipes: Partial<Record<string, StableDiffusionPipeline>> = {};
  beforeAll(async () => {
    for (const unet of ['blending', 'inpainting'] as const) {
      const dir = writeTinyPipeline(mkdtempSync(join(tmpdir(), `tiffin-inpaint-ref-${unet}-`)), {
        unetInChannels: unet === 'inpainting' ? 9 : undefined,
      });
      dirs.push(dir);
      for (const engine of ['onnxruntime', 'wasm'] as TinyEngine[])
        pipes[`${unet}/${engine}`] = await openTinyPipeline(dir, engine);
    }
  }, 180_000);
  afterAll(() => {
    for (const p of Object.values(pipes)) p?.dispose();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  for (const engine of ['onnxruntime', 'wasm'] as TinyEngine[]) {
    for (const [key, c] of Object.entries(fx.cases)) {
      it(`${key} on ${engine}`, async () => {
        const pipe = pipes[`${c.unet}/${engine}`] as StableDiffusionPipeline;
        const guided = c.guidance_scale > 1;
        const out = await pipe.inpaint({
          prompt_embeds: embeds('pipe/prompt_embeds'),
          ...(guided ? { negative_prompt_embeds: embeds('pipe/negative_prompt_embeds') } : {}),
          image,
          mask_image: masks[c.mask_mode],
          strength: c.strength,
          num_inference_steps: c.num_inference_steps,
          guidance_scale: c.guidance_scale,
          scheduler: c.scheduler,
          noise: fixtureNoise(),
          return_latents: true,
        });
        expect(out.timesteps).toEqual(c.timesteps);
        const latents = out.latents as { shape: number[]; data: Float32Array };
        expect(latents.shape).toEqual(c.final_latents.shape);
        const latentErr = maxAbsDiff(latents.data, c.final_latents.data);
        const level = maxAbsDiff(out.images[0].data, c.image_uint8);
        console.info(
          `inpaint ${key} ${engine}: max 8-bit level diff ${level}, latent err ${latentErr.toExponential(2)}`,
        );
        expect(level).toBeLessThanOrEqual(1);
      });
    }
  }
});
