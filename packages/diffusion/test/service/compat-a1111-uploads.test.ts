import type { ServerHandle } from '@tiffin/core';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callFrom, serveTiny } from './compat-helpers.js';

/**
 * An A1111 upload over the served side (within its pixel bound) is fitted once for all of a request's `n_iter` generations (its decoded
 * pixels moved into the resizing thread, not copied: docs/diffusion-service.md, uploads): every iteration gets the
 * same fitted picture, so iteration i is the image a one-iteration request with the seed of iteration i makes.
 */
let server: ServerHandle;
let most: number;

beforeAll(async () => {
  server = await serveTiny();
  most = ((await (await fetch(`${server.url}/defaults`)).json()) as { max_size: number }).max_size;
}, 180_000);

afterAll(async () => {
  await server?.close();
});

/** A `width`×`height` PNG with detail everywhere, as base64. */
async function png(width: number, height: number, grey = false): Promise<string> {
  const channels = grey ? 1 : 3;
  const data = new Uint8Array(width * height * channels).map((_, i) =>
    grey ? ((i % width) * 255) / width : (i * 7 + ((i / 3 / width) | 0) * 5) % 256,
  );
  const out = await sharp(Buffer.from(data), { raw: { width, height, channels } }).png().toBuffer();
  return out.toString('base64');
}

type Answer = { images: string[]; info: string };

async function img2img(body: Record<string, unknown>): Promise<Answer> {
  const res = await callFrom<Answer>(server, '127.0.0.1', 'POST', '/sdapi/v1/img2img', {
    prompt: 'a red cat',
    steps: 2,
    denoising_strength: 0.5,
    ...body,
  });
  expect(res.status, JSON.stringify(res.body).slice(0, 200)).toBe(200);
  return res.body;
}

describe('a compatible route’s upload over the served side', () => {
  it('is fitted once: each of n_iter generations is the one-iteration image of its seed', async () => {
    // Wider than the served side, within A1111's pixel bound (the served size's pixels).
    const init = await png(2 * most, most / 2);
    const fitted = [most, Math.floor(most / 4 / 8) * 8];
    const two = await img2img({ init_images: [init], n_iter: 2, seed: 5 });
    expect(two.images).toHaveLength(2);
    for (const image of two.images) {
      const { width, height } = await sharp(Buffer.from(image, 'base64')).metadata();
      expect([width, height]).toEqual(fitted);
    }
    const second = await img2img({ init_images: [init], n_iter: 1, seed: 6 });
    const pixels = (b64: string) => sharp(Buffer.from(b64, 'base64')).raw().toBuffer();
    expect((await pixels(two.images[1] as string)).equals(await pixels(second.images[0] as string))).toBe(
      true,
    );
  }, 120_000);

  it('with a mask: both fitted once for every iteration; a mask of another size is refused', async () => {
    const [width, height] = [2 * most, most / 2];
    const init = await png(width, height);
    const masked = await img2img({
      init_images: [init],
      mask: await png(width, height, true),
      n_iter: 2,
      seed: 5,
    });
    expect(masked.images).toHaveLength(2);
    const wrong = await callFrom<{ error: string }>(server, '127.0.0.1', 'POST', '/sdapi/v1/img2img', {
      prompt: 'x',
      steps: 2,
      init_images: [init],
      mask: await png(width / 2, height / 2, true),
    });
    expect(wrong.status).toBeGreaterThanOrEqual(400);
    expect(wrong.status).toBeLessThan(500);
    expect(JSON.stringify(wrong.body)).toMatch(/must be the same size/);
  }, 120_000);

  it('on OpenAI edits too: an image and an RGBA mask decoded in the upload threads, fitted to the served side', async () => {
    const [width, height] = [2 * most, most / 2];
    const image = Buffer.from(await png(width, height), 'base64');
    const alpha = new Uint8Array(width * height * 4).map((_, i) =>
      i % 4 === 3 ? (i % 8 < 4 ? 0 : 255) : 128,
    );
    const mask = await sharp(Buffer.from(alpha), { raw: { width, height, channels: 4 } })
      .png()
      .toBuffer();
    for (const parts of [{ image }, { image, mask }]) {
      const form = new FormData();
      form.set('prompt', 'a red cat');
      for (const [name, bytes] of Object.entries(parts))
        form.set(name, new Blob([new Uint8Array(bytes)], { type: 'image/png' }), `${name}.png`);
      const res = await fetch(`${server.url}/v1/images/edits`, { method: 'POST', body: form });
      const body = (await res.json()) as { data: Array<{ b64_json: string }> };
      expect(res.status, JSON.stringify(body).slice(0, 200)).toBe(200);
      const { width: w, height: h } = await sharp(
        Buffer.from(body.data[0]?.b64_json ?? '', 'base64'),
      ).metadata();
      expect([w, h]).toEqual([most, Math.floor(most / 4 / 8) * 8]);
    }
  }, 120_000);
});
