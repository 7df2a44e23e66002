import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { MemoryLogger, type ServerHandle, serve } from '@tiffin/core';
import OpenAI, { APIError, toFile } from 'openai';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MODEL_DEFAULTS_FILE } from '../../src/pipeline/model-defaults.js';
import { createDiffusionService } from '../../src/service/diffusion-service.js';
import { tinyDir } from '../helpers/tiny.js';

/**
 * The OpenAI Images API as the official `openai` npm package calls it: `stream: true` with `partial_images` gives
 * the server-sent events the SDK reads (`image_generation.*` on generations, `image_edit.*` on edits), partial
 * images while the model denoises and the final image as the non-streamed answer has it; `image[]` with several
 * images uses every one of them; an upload over the bound is a size error the SDK sees as one.
 */
let server: ServerHandle;
let client: OpenAI;

beforeAll(async () => {
  // Few steps: the OpenAI API has no steps field, the model's own defaults set them.
  const modelDir = tinyDir('sd1');
  writeFileSync(join(modelDir, MODEL_DEFAULTS_FILE), JSON.stringify({ num_inference_steps: 6 }));
  const sd = createDiffusionService({ modelDir, backend: 'wasm', logger: new MemoryLogger() });
  server = await serve(sd.service, { port: 0, host: '127.0.0.1', logger: false, handleSignals: false });
  client = new OpenAI({ apiKey: 'unused', baseURL: `${server.url}/v1`, maxRetries: 0 });
}, 120_000);

afterAll(async () => {
  await server?.close();
});

/** A 32×32 PNG of one colour. */
const square = (background: string) =>
  sharp({ create: { width: 32, height: 32, channels: 3, background } })
    .png()
    .toBuffer();

/** Tiffin's `seed` extension makes two calls comparable; the SDK passes unknown fields through. */
const seeded = { seed: 5 } as object;

/** A 32×32 generation of the same prompt and seed: streamed with `partial_images`, or answered plainly. */
const generation = { model: 'tiny', prompt: 'a red circle', size: '32x32' as never, ...seeded };
const streamedGeneration = (partial_images: number) =>
  client.images.generate({ ...generation, stream: true, partial_images });

const pngSize = async (b64: string) => {
  const meta = await sharp(Buffer.from(b64, 'base64')).metadata();
  return `${meta.format} ${meta.width}x${meta.height}`;
};

describe('OpenAI image streams, as the openai SDK reads them', () => {
  it('streams partial images, then the image the plain call answers', async () => {
    const stream = await streamedGeneration(2);
    const events: Array<{ type: string; index?: number; b64: string; size: string }> = [];
    for await (const event of stream)
      events.push({
        type: event.type,
        index: event.type === 'image_generation.partial_image' ? event.partial_image_index : undefined,
        b64: event.b64_json,
        size: event.size,
      });
    expect(events.map((e) => [e.type, e.index])).toEqual([
      ['image_generation.partial_image', 0],
      ['image_generation.partial_image', 1],
      ['image_generation.completed', undefined],
    ]);
    for (const e of events) {
      expect(e.size).toBe('32x32');
      expect(await pngSize(e.b64)).toBe('png 32x32');
    }
    const plain = await client.images.generate(generation);
    expect(events[2].b64).toBe(plain.data?.[0]?.b64_json);
  }, 120_000);

  it('sends only the final image with partial_images 0, and edits as image_edit events', async () => {
    const none = await streamedGeneration(0);
    const types: string[] = [];
    for await (const event of none) types.push(event.type);
    expect(types).toEqual(['image_generation.completed']);

    const edit = await client.images.edit({
      model: 'tiny',
      prompt: 'a blue square',
      image: await toFile(await square('#c02020'), 'red.png', { type: 'image/png' }),
      stream: true,
      partial_images: 1,
      ...seeded,
    });
    const editTypes: string[] = [];
    for await (const event of edit) editTypes.push(event.type);
    expect(editTypes).toEqual(['image_edit.partial_image', 'image_edit.completed']);
  }, 120_000);

  it('refuses partial_images past 3 as OpenAI does, naming the parameter', async () => {
    const refused = await client.images
      .generate({ model: 'tiny', prompt: 'x', stream: true, partial_images: 4 })
      .then(
        () => undefined,
        (err: unknown) => err,
      );
    expect(refused).toBeInstanceOf(APIError);
    expect((refused as APIError).status).toBe(400);
    expect((refused as APIError & { param?: string }).param).toBe('partial_images');
    const res = await fetch(`${server.url}/v1/images/generations`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ prompt: 'x', stream: 'maybe' }),
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { param: string } }).error.param).toBe('stream');
  });
});

describe('OpenAI edits with several images', () => {
  it('uses every image[] part, not only the first', async () => {
    const red = await toFile(await square('#c02020'), 'red.png', { type: 'image/png' });
    const blue = await toFile(await square('#2040c0'), 'blue.png', { type: 'image/png' });
    const edit = async (image: Awaited<ReturnType<typeof toFile>>[]) =>
      (
        await client.images.edit({
          model: 'tiny',
          prompt: 'a square',
          image,
          size: '32x32' as never,
          ...seeded,
        })
      ).data?.[0]?.b64_json;
    const one = await edit([await toFile(await square('#c02020'), 'red.png', { type: 'image/png' })]);
    const two = await edit([red, blue]);
    expect(one).toBeTypeOf('string');
    expect(two).toBeTypeOf('string');
    expect(two).not.toBe(one);
  }, 120_000);

  it('answers an image over the bound with a size error the SDK sees as one', async () => {
    const big = await sharp({ create: { width: 4200, height: 4200, channels: 3, background: '#c02020' } })
      .png()
      .toBuffer();
    const refused = await client.images
      .edit({ model: 'tiny', prompt: 'x', image: await toFile(big, 'big.png', { type: 'image/png' }) })
      .then(
        () => undefined,
        (err: unknown) => err,
      );
    expect(refused).toBeInstanceOf(APIError);
    const error = refused as APIError;
    expect(error.status).toBe(400);
    expect(error.code).toBe('image_too_large');
    expect(error.message).toContain('4200×4200');
    expect(error.message).not.toContain('not a PNG');
  }, 120_000);
});
