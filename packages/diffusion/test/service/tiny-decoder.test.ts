import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MemoryLogger, type ServerHandle, serve } from '@tiffin/core';
import { decodeBmp } from '@tiffin/io-image';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isPreviewStep, shrink } from '../../src/pipeline/decoded-preview.js';
import { StableDiffusionPipeline } from '../../src/pipeline/pipeline.js';
import { createDiffusionService } from '../../src/service/diffusion-service.js';
import { writeTinyAutoencoder } from '../../src/tiny/write-tiny-autoencoder.js';
import { tinyDir } from '../helpers/tiny.js';
import { jpegSize } from './service-helpers.js';

/** `--vae-tiny` on the service: the default decoder, `decoder: "full"` per request, decoded previews in task events. */
const work = mkdtempSync(join(tmpdir(), 'tiffin-sd-taesd-'));
const vaeTiny = writeTinyAutoencoder(join(work, 'taesd'));
let handle: ServerHandle;

const small = { prompt: 'a tiny cat', height: 32, width: 32, num_inference_steps: 8, seed: 7 };
const url = (path: string) => `${handle.url}${path}`;
const post = (path: string, body: unknown) =>
  fetch(url(path), {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

beforeAll(async () => {
  const sd = createDiffusionService({
    modelDir: tinyDir('sd1'),
    backend: 'wasm',
    vaeTiny,
    logger: new MemoryLogger(),
  });
  handle = await serve(sd.service, { port: 0, host: '127.0.0.1', logger: false, handleSignals: false });
}, 120_000);

afterAll(async () => {
  await handle?.close();
  rmSync(work, { recursive: true, force: true });
});

describe('tiny autoencoder in the service', () => {
  it('decodes with it by default, with the full VAE on request: both full-size JPEGs, different pictures', async () => {
    const quick = { ...small, num_inference_steps: 2 };
    const tiny = await post('/text2img', quick);
    const full = await post('/text2img', { ...quick, decoder: 'full' });
    const asked = await post('/text2img', { ...quick, decoder: 'tiny' });
    expect([tiny.status, full.status, asked.status]).toEqual([200, 200, 200]);
    const [a, b, c] = await Promise.all(
      [tiny, full, asked].map(async (r) => new Uint8Array(await r.arrayBuffer())),
    );
    for (const bytes of [a, b, c]) expect(jpegSize(bytes)).toEqual({ width: 32, height: 32 });
    expect(Buffer.from(a).equals(Buffer.from(c))).toBe(true);
    expect(Buffer.from(a).equals(Buffer.from(b))).toBe(false);
  });

  it('refuses an unknown decoder with 400 naming the field', async () => {
    for (const decoder of ['huge', 1, ['tiny']]) {
      const res = await post('/text2img', { ...small, decoder });
      expect(res.status).toBe(400);
      expect(await res.text()).toContain('decoder');
    }
  });

  it('sends decoded previews (full images, decodable) every ⌈steps/4⌉ steps and at the last', async () => {
    const res = await post('/text2img/submit?preview=true', small);
    const { id } = (await res.json()) as { id: string };
    const text = await (await fetch(url(`/text2img/events?id=${id}`))).text();
    const steps = text
      .split('\n\n')
      .filter((block) => block.includes('event: step'))
      .map(
        (block) => JSON.parse(block.slice(block.indexOf('data: ') + 6)) as { step: number; preview?: string },
      );
    expect(steps.map((s) => s.step)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(steps.filter((s) => s.preview).map((s) => s.step)).toEqual([2, 4, 6, 8]);
    for (const step of steps.filter((s) => s.preview)) {
      const bmp = decodeBmp(Buffer.from((step.preview as string).split(',')[1], 'base64'));
      expect([bmp.width, bmp.height]).toEqual([32, 32]);
    }
  });
});

describe('decoded previews', () => {
  it('are picked every ⌈total/4⌉ steps and on the last', () => {
    const picked = (total: number) =>
      Array.from({ length: total }, (_, i) => i + 1).filter((s) => isPreviewStep(s, total));
    expect(picked(4)).toEqual([1, 2, 3, 4]);
    expect(picked(20)).toEqual([5, 10, 15, 20]);
    expect(picked(7)).toEqual([2, 4, 6, 7]);
    expect(picked(1)).toEqual([1]);
  });

  it('are shrunk by a box filter to at most 256 px a side', () => {
    const width = 512;
    const height = 384;
    const data = new Uint8Array(width * height * 3);
    for (let i = 0; i < data.length; i++) data[i] = (i % 3) * 100 + ((i / 3) % 2);
    const small = shrink({ width, height, data }, 256);
    expect([small.width, small.height]).toEqual([256, 192]);
    // Each output pixel averages a 2×2 block: channel c is c·100 plus the mean of 0 and 1 (0.5, rounded to 1).
    expect([...small.data.subarray(0, 3)]).toEqual([1, 101, 201]);
    const same = { width: 64, height: 64, data: new Uint8Array(64 * 64 * 3) };
    expect(shrink(same, 256)).toBe(same);
  });
});

describe('decoder "tiny" without a tiny autoencoder', () => {
  it('is refused before any step, naming --vae-tiny', async () => {
    const pipe = await StableDiffusionPipeline.fromPretrained(tinyDir('sd1'), {
      backend: 'wasm',
      log: () => {},
    });
    try {
      let steps = 0;
      await expect(
        pipe.text2img({ ...small, height: 16, width: 16, decoder: 'tiny', onProgress: () => steps++ }),
      ).rejects.toThrow(/--vae-tiny/);
      expect(steps).toBe(0);
    } finally {
      pipe.dispose();
    }
  }, 60_000);
});
