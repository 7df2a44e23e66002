import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MemoryLogger, type ServerHandle, serve } from '@tiffin/core';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDiffusionService } from '../../src/service/diffusion-service.js';
import { readPngText } from '../../src/service/png-text.js';
import { tinyDir } from '../helpers/tiny.js';
import { writeTinyLora } from './service-helpers.js';

/**
 * The native routes' images carry A1111's infotext as A1111 writes it, with the values the generation really ran
 * with: a PNG's `parameters` text chunk (what the page's Download saves), a JPEG's or WebP's EXIF UserComment.
 * The A1111 `png-info` route reads a native PNG back into the same parameters.
 */
const modelDir = tinyDir('sd1');
const loraDir = join(mkdtempSync(join(tmpdir(), 'tiffin-sd-infotext-')), 'loras');
let server: ServerHandle;

beforeAll(async () => {
  writeTinyLora(loraDir, 'style.safetensors', 'style');
  const sd = createDiffusionService({
    modelDir,
    loraDir,
    pipeline: ['text2img', 'img2img'],
    backend: 'wasm',
    logger: new MemoryLogger(),
  });
  server = await serve(sd.service, { port: 0, host: '127.0.0.1', logger: false, handleSignals: false });
}, 120_000);

afterAll(async () => {
  await server?.close();
});

const short = () =>
  createHash('sha256')
    .update(readFileSync(join(modelDir, 'unet', 'diffusion_pytorch_model.safetensors')))
    .digest('hex')
    .slice(0, 10);
const name = modelDir.split('/').pop();

async function text2img(body: Record<string, unknown>): Promise<Buffer> {
  const res = await fetch(`${server.url}/text2img`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const bytes = Buffer.from(await res.arrayBuffer());
  expect(res.status, bytes.toString('utf8', 0, 300)).toBe(200);
  return bytes;
}

describe("the native routes' infotext", () => {
  it("writes the request's real values in the PNG's parameters chunk, and png-info reads them back", async () => {
    const png = await text2img({
      prompt: 'a red circle',
      negative_prompt: 'blue',
      num_inference_steps: 3,
      scheduler: 'dpmpp_2m',
      use_karras_sigmas: true,
      guidance_scale: 6.5,
      seed: 7,
      width: 32,
      height: 24,
      clip_skip: 1,
      lora_weights: [{ path: 'style.safetensors', weight: 0.5 }],
      output_format: 'png',
    });
    const { parameters } = readPngText(png);
    expect(parameters).toBe(
      `a red circle <lora:style:0.5>\nNegative prompt: blue\nSteps: 3, Sampler: DPM++ 2M, Schedule type: Karras, CFG scale: 6.5, Seed: 7, Size: 32x24, Model hash: ${short()}, Model: ${name}, Clip skip: 2`,
    );
    // The chunk does not disturb the pixels: libpng (sharp) decodes the PNG at its size.
    expect(await sharp(png).metadata()).toMatchObject({ format: 'png', width: 32, height: 24 });
    const res = await fetch(`${server.url}/sdapi/v1/png-info`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ image: png.toString('base64') }),
    });
    const info = (await res.json()) as { info: string; parameters: Record<string, string> };
    expect(res.status).toBe(200);
    expect(info.info).toBe(parameters);
    expect(info.parameters).toMatchObject({
      Prompt: 'a red circle <lora:style:0.5>',
      'Negative prompt': 'blue',
      Steps: '3',
      Sampler: 'DPM++ 2M',
      'Schedule type': 'Karras',
      'CFG scale': '6.5',
      Seed: '7',
      'Size-1': '32',
      'Size-2': '24',
      'Model hash': short(),
      Model: name,
      'Clip skip': '2',
    });
  });

  it("names the model's own scheduler and a drawn seed when the request leaves them out", async () => {
    const png = await text2img({
      prompt: 'a cat',
      num_inference_steps: 2,
      width: 16,
      height: 16,
      output_format: 'png',
    });
    const res = await fetch(`${server.url}/text2img`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'image/png' },
      body: JSON.stringify({ prompt: 'a cat', num_inference_steps: 2, width: 16, height: 16 }),
    });
    const seed = res.headers.get('x-seed');
    const { parameters } = readPngText(Buffer.from(await res.arrayBuffer()));
    expect(parameters).toMatch(
      new RegExp(`^a cat\\nSteps: 2, Sampler: [^,]+, CFG scale: [\\d.]+, Seed: ${seed}, Size: 16x16,`),
    );
    expect(readPngText(png).parameters).not.toMatch(/Sampler: (default|null)/);
  });

  it('writes the strength of an img2img and its upload size', async () => {
    const source = await sharp({ create: { width: 40, height: 24, channels: 3, background: '#2040c0' } })
      .png()
      .toBuffer();
    const form = new FormData();
    form.set('img', new Blob([source], { type: 'image/png' }), 'in.png');
    const data = { prompt: 'a boat', num_inference_steps: 4, strength: 0.5, seed: 3, output_format: 'png' };
    form.set('data', new Blob([JSON.stringify(data)], { type: 'application/json' }));
    const res = await fetch(`${server.url}/img2img`, { method: 'POST', body: form });
    expect(res.status).toBe(200);
    const { parameters } = readPngText(Buffer.from(await res.arrayBuffer()));
    expect(parameters).toMatch(
      /^a boat\nSteps: 4, Sampler: [^,]+, CFG scale: [\d.]+, Seed: 3, Size: 40x24, /,
    );
    expect(parameters).toMatch(/, Denoising strength: 0\.5$/);
  });

  it("writes it in a JPEG's and a WebP's EXIF UserComment, as A1111 does", async () => {
    for (const output_format of ['jpeg', 'webp']) {
      const bytes = await text2img({
        prompt: 'a red circle',
        num_inference_steps: 2,
        seed: 9,
        width: 16,
        height: 16,
        output_format,
      });
      const { exif, format } = await sharp(bytes).metadata();
      expect(format).toBe(output_format);
      // EXIF's UserComment: an 8-byte character code, then the text.
      const text = exif?.toString('latin1') ?? '';
      const at = text.indexOf('ASCII\0\0\0');
      expect(at, output_format).toBeGreaterThan(0);
      expect(text.slice(at + 8)).toMatch(
        /^a red circle\nSteps: 2, Sampler: [^,]+, CFG scale: [\d.]+, Seed: 9, Size: 16x16, /,
      );
    }
  });
});
