import { MemoryLogger, type ServerHandle, serve } from '@tiffin/core';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDiffusionService } from '../../src/service/diffusion-service.js';
import { negotiateOutputFormat } from '../../src/service/output-format.js';
import { tinyDir } from '../helpers/tiny.js';

/**
 * The answer's image format over HTTP on the tiny pipeline: `Accept` or `output_format` (with `output_quality`) pick
 * JPEG, PNG or WebP, checked by decoding the answer; an `Accept` naming none of them is a 406 before any work; a task's
 * `get` answers the format its submit asked for.
 */
let handle: ServerHandle;
const small = { prompt: 'a tiny cat', height: 16, width: 24, num_inference_steps: 1, seed: 5 };

const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${handle.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });

/** The decoded format and size of an answer's bytes. */
async function decoded(res: Response): Promise<{ format?: string; width?: number; height?: number }> {
  const { format, width, height } = await sharp(Buffer.from(await res.arrayBuffer())).metadata();
  return { format, width, height };
}

beforeAll(async () => {
  const sd = createDiffusionService({
    modelDir: tinyDir('sd1'),
    backend: 'onnxruntime',
    logger: new MemoryLogger(),
  });
  handle = await serve(sd.service, { port: 0, host: '127.0.0.1', logger: false, handleSignals: false });
}, 120_000);

afterAll(async () => {
  await handle?.close();
});

describe('negotiateOutputFormat', () => {
  it('takes output_format, else the best image type of Accept, else JPEG', () => {
    expect(negotiateOutputFormat(null, null)).toBe('jpeg');
    expect(negotiateOutputFormat('*/*', null)).toBe('jpeg');
    expect(negotiateOutputFormat('image/png', null)).toBe('png');
    expect(negotiateOutputFormat('image/webp;q=0.5, image/png;q=0.9', null)).toBe('png');
    expect(negotiateOutputFormat('image/avif, image/webp;q=0.8', null)).toBe('webp');
    expect(negotiateOutputFormat('text/html, */*;q=0.8', null)).toBe('jpeg');
    expect(negotiateOutputFormat('image/jpeg', 'jpeg')).toBe('jpeg');
    expect(negotiateOutputFormat('image/*', 'webp')).toBe('webp');
    expect(() => negotiateOutputFormat('image/png;q=0', null)).toThrow(/Accept/);
    expect(() => negotiateOutputFormat('image/jpeg', 'png')).toThrow(/Accept/);
    expect(() => negotiateOutputFormat('application/json', null)).toThrow(/Accept/);
  });
});

describe('the answer’s format', () => {
  it('follows Accept: image/png and image/webp answer those formats', async () => {
    const png = await post('/text2img', small, { accept: 'image/png' });
    expect(png.status).toBe(200);
    expect(png.headers.get('content-type')).toBe('image/png');
    expect(await decoded(png)).toEqual({ format: 'png', width: 24, height: 16 });
    const webp = await post('/text2img', small, { accept: 'image/webp' });
    expect(webp.headers.get('content-type')).toBe('image/webp');
    expect(await decoded(webp)).toEqual({ format: 'webp', width: 24, height: 16 });
    const plain = await post('/text2img', small);
    expect(await decoded(plain)).toEqual({ format: 'jpeg', width: 24, height: 16 });
  });

  it('follows output_format, with output_quality for JPEG and WebP', async () => {
    const sizes: number[] = [];
    for (const quality of [10, 95]) {
      const res = await post('/text2img', {
        ...small,
        height: 64,
        width: 64,
        output_format: 'webp',
        output_quality: quality,
      });
      expect(res.headers.get('content-type')).toBe('image/webp');
      const bytes = Buffer.from(await res.arrayBuffer());
      expect((await sharp(bytes).metadata()).format).toBe('webp');
      sizes.push(bytes.length);
    }
    expect(sizes[0]).toBeLessThan(sizes[1]);
    const png = await post('/text2img', { ...small, output_format: 'png', output_quality: 50 });
    expect(png.status).toBe(400);
  });

  it('answers 406 NOT_ACCEPTABLE, before generating, for an Accept it cannot meet', async () => {
    for (const [accept, body] of [
      ['image/avif', small],
      ['application/json', small],
      ['image/jpeg', { ...small, output_format: 'png' }],
    ] as const) {
      const res = await post('/text2img', body, { accept });
      expect(res.status).toBe(406);
      expect(await res.json()).toMatchObject({ code: 'NOT_ACCEPTABLE' });
    }
  });

  it('makes every part of a multi-image answer in the format asked for', async () => {
    const res = await post('/text2img', { ...small, num_images_per_prompt: 2 }, { accept: 'image/webp' });
    expect(res.headers.get('content-type')).toMatch(/^multipart\/mixed; boundary=/);
    const text = Buffer.from(await res.arrayBuffer()).toString('latin1');
    expect(text.match(/content-type: image\/webp/g)).toHaveLength(2);
  });

  it('is the same on a task’s get: the format its submit asked for', async () => {
    const submit = await post('/text2img/submit', { ...small, output_format: 'png' });
    expect(submit.status).toBe(202);
    const { id } = (await submit.json()) as { id: string };
    let status = '';
    for (let i = 0; i < 200 && status !== 'succeeded'; i++) {
      status = ((await (await fetch(`${handle.url}/text2img/status?id=${id}`)).json()) as { status: string })
        .status;
      if (status === 'failed') throw new Error('the task failed');
      await new Promise((r) => setTimeout(r, 100));
    }
    const got = await fetch(`${handle.url}/text2img/get?id=${id}`);
    expect(got.headers.get('content-type')).toBe('image/png');
    expect(await decoded(got)).toEqual({ format: 'png', width: 24, height: 16 });
  });
});
