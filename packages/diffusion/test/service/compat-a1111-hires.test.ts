import { MemoryLogger, type ServerHandle, serve } from '@tiffin/core';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StableDiffusionPipeline } from '../../src/pipeline/pipeline.js';
import { createDiffusionService, type DiffusionService } from '../../src/service/diffusion-service.js';
import type { GenerationEvent } from '../../src/service/generation-events.js';
import { resizeLanczos } from '../../src/service/lanczos-resize.js';
import { tinyDir } from '../helpers/tiny.js';
import { callFrom, type JsonAnswer } from './compat-helpers.js';

/**
 * A1111's hires fix as its clients send it (`enable_hr` and the `hr_*` fields on `/sdapi/v1/txt2img`) and the native
 * `hires` option of `/text2img` it maps onto: the size doubles, the upscalers differ, denoising 0 is the upscaled
 * first pass through the VAE, progress counts both passes, hostile sizes are refused naming the field.
 */
const modelDir = tinyDir('sd1');
let sd: DiffusionService;
let server: ServerHandle;

beforeAll(async () => {
  sd = createDiffusionService({ modelDir, backend: 'wasm', logger: new MemoryLogger() });
  server = await serve(sd.service, { port: 0, host: '127.0.0.1', logger: false, handleSignals: false });
}, 120_000);

afterAll(async () => {
  await server?.close();
});

type Answer = JsonAnswer<{ images?: string[]; info?: string }>;

const post = (path: string, body: unknown): Promise<Answer> =>
  callFrom(server, '127.0.0.1', 'POST', path, body);

const base = { prompt: 'a red circle', negative_prompt: 'blue', steps: 3, seed: 7, width: 32, height: 32 };
const txt2img = (extra: Record<string, unknown> = {}) => post('/sdapi/v1/txt2img', { ...base, ...extra });

async function pixels(png: Buffer): Promise<{ width: number; height: number; data: Uint8Array }> {
  const { data, info } = await sharp(png).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  return { width: info.width, height: info.height, data: new Uint8Array(data) };
}

const firstImage = async (answer: Answer) => pixels(Buffer.from(answer.body.images?.[0] ?? '', 'base64'));

describe('A1111 hires fix', () => {
  it('enable_hr doubles the size and writes the hires fields in the infotext', async () => {
    const answer = await txt2img({ enable_hr: true, hr_second_pass_steps: 2 });
    expect(answer.status).toBe(200);
    const image = await firstImage(answer);
    expect([image.width, image.height]).toEqual([64, 64]);
    const info = JSON.parse(answer.body.info ?? '{}') as { infotexts: string[]; denoising_strength: number };
    expect(info.denoising_strength).toBe(0.75);
    const line = info.infotexts[0].split('\n').at(-1);
    expect(line).toContain('Size: 32x32');
    expect(line).toContain(
      'Denoising strength: 0.75, Hires upscale: 2, Hires steps: 2, Hires upscaler: Latent',
    );
  });

  it('Latent, Latent (nearest) and Lanczos give different images; hr_resize_x sets the size', async () => {
    const common = { enable_hr: true, denoising_strength: 0.5, hr_resize_x: 48 };
    const images = await Promise.all(
      ['Latent', 'Latent (nearest)', 'Lanczos'].map(async (hr_upscaler) =>
        firstImage(await txt2img({ ...common, hr_upscaler })),
      ),
    );
    for (const image of images) expect([image.width, image.height]).toEqual([48, 48]);
    expect(Buffer.from(images[0].data).equals(Buffer.from(images[1].data))).toBe(false);
    expect(Buffer.from(images[0].data).equals(Buffer.from(images[2].data))).toBe(false);
  });

  it('denoising 0 with Lanczos is the first pass, Lanczos-upscaled, through the VAE; the native option is the same', async () => {
    const plain = await firstImage(await txt2img());
    const hires = { enable_hr: true, hr_upscaler: 'Lanczos', denoising_strength: 0 };
    const fixed = await firstImage(await txt2img(hires));
    // The same through the library: the plain image (the first pass), Pillow's Lanczos, encoded and decoded.
    const pipe = await StableDiffusionPipeline.fromPretrained(modelDir, { backend: 'wasm' });
    try {
      const upscaled = resizeLanczos(plain, 64, 64);
      const roundTrip = await pipe.img2img({
        prompt: base.prompt,
        image: upscaled,
        strength: 0,
        second_pass: true,
        seed: base.seed,
        num_inference_steps: base.steps,
      });
      expect(Buffer.from(fixed.data).equals(Buffer.from(roundTrip.images[0].data))).toBe(true);
    } finally {
      pipe.dispose();
    }
    const native = await fetch(`${server.url}/text2img`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        prompt: base.prompt,
        negative_prompt: base.negative_prompt,
        num_inference_steps: 3,
        seed: 7,
        width: 32,
        height: 32,
        output_format: 'png',
        hires: { upscaler: 'lanczos', strength: 0 },
      }),
    });
    expect(native.status).toBe(200);
    const nativeImage = await pixels(Buffer.from(await native.arrayBuffer()));
    expect(nativeImage.width).toBe(64);
    expect(Buffer.from(nativeImage.data).equals(Buffer.from(fixed.data))).toBe(true);
  });

  it('progress counts both passes as one run of steps, each image of a batch its own second pass', async () => {
    const steps: Array<[number, number]> = [];
    const stop = sd.generator.events.subscribe((e: GenerationEvent) => {
      if (e.type === 'step') steps.push([e.step, e.totalSteps]);
    });
    try {
      // 4 first-pass steps, then 4 × 0.5 = 2 second-pass steps for each of the 2 images.
      const hires = { steps: 4, enable_hr: true, denoising_strength: 0.5, hr_upscaler: 'Lanczos' };
      const answer = await txt2img({ ...hires, batch_size: 2 });
      expect(answer.status).toBe(200);
      expect(answer.body.images).toHaveLength(2);
      const sizes = await Promise.all(
        (answer.body.images ?? []).map(async (b64) => (await pixels(Buffer.from(b64, 'base64'))).width),
      );
      expect(sizes).toEqual([64, 64]);
    } finally {
      stop();
    }
    expect(steps).toEqual([1, 2, 3, 4, 5, 6, 7, 8].map((s) => [s, 8]));
  });

  it('refuses hostile hires values with a 422 naming the field, before any work', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ hr_scale: 1e9 }, 'hr_scale'],
      [{ hr_scale: 'x' }, 'hr_scale'],
      [{ hr_scale: 7 }, 'hr_scale'],
      [{ hr_resize_x: 1e9 }, 'hr_resize_x'],
      [{ hr_resize_y: -8 }, 'hr_resize_y'],
      [{ hr_upscaler: 'R-ESRGAN 4x+' }, 'hr_upscaler'],
      [{ hr_upscaler: 'constructor' }, 'hr_upscaler'],
      [{ denoising_strength: 2 }, 'denoising_strength'],
      [{ hr_second_pass_steps: 1e9 }, 'hires.steps'],
    ];
    for (const [fields, name] of cases) {
      const answer = await txt2img({ enable_hr: true, ...fields });
      expect(answer.status, JSON.stringify(fields)).toBe(422);
      expect(JSON.stringify(answer.body), JSON.stringify(fields)).toContain(name);
    }
  });

  it('refuses a native hires size over the served one with a 400 naming the field', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ scale: 1e9 }, 'hires.scale'],
      [{ scale: 8 }, 'hires.scale'],
      [{ width: 1e9 }, 'hires.width'],
      [{ width: 48, height: 40 }, 'hires.width'],
      [{ upscaler: 'esrgan' }, 'hires.upscaler'],
    ];
    for (const [hires, name] of cases) {
      const answer = await post('/text2img', { prompt: 'x', width: 32, height: 32, hires });
      expect(answer.status, JSON.stringify(hires)).toBe(400);
      expect(JSON.stringify(answer.body), JSON.stringify(hires)).toContain(name);
    }
  });
});
