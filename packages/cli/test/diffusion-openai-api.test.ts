import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI, { toFile } from 'openai';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CollectedProcess, spawnTiffin } from './cli-process.js';

/**
 * The official `openai` npm client pointed at `tiffin diffusion start demo` (baseURL): it generates, edits with a
 * mask, makes variations, lists models; results decode in the format asked; errors arrive as its typed
 * `APIError`. Hostile bodies sent by hand are 4xx in OpenAI's error shape, never 5xx.
 */
const TOKEN = 'openai-test-token';
let proc: CollectedProcess;
let url = '';
let client: OpenAI;

beforeAll(async () => {
  proc = spawnTiffin(['diffusion', 'start', 'demo', '--port', '0', '--max-images', '2'], {
    TIFFIN_TF_BACKEND: 'onnxruntime',
    TIFFIN_API_TOKEN: TOKEN,
    TIFFIN_HOME: mkdtempSync(join(tmpdir(), 'tiffin-cli-home-')),
  });
  url = await proc.url;
  client = new OpenAI({ apiKey: TOKEN, baseURL: `${url}/v1`, maxRetries: 0 });
}, 120_000);

afterAll(async () => {
  proc?.child.kill('SIGTERM');
  await proc?.done;
});

/** A 64×64 PNG: a blue square on red. */
const picture = () =>
  sharp({ create: { width: 64, height: 64, channels: 3, background: '#c02020' } })
    .composite([
      {
        input: { create: { width: 32, height: 32, channels: 3, background: '#2040c0' } },
        left: 16,
        top: 16,
      },
    ])
    .png()
    .toBuffer();

/** A 64×64 RGBA mask, transparent (edit here) on the right half, as OpenAI's masks are. */
const transparentRight = () => {
  const data = Buffer.alloc(64 * 64 * 4);
  for (let i = 0; i < 64 * 64; i++) data[i * 4 + 3] = i % 64 >= 32 ? 0 : 255;
  return sharp(data, { raw: { width: 64, height: 64, channels: 4 } })
    .png()
    .toBuffer();
};

async function decoded(b64: string | undefined) {
  expect(typeof b64).toBe('string');
  return sharp(Buffer.from(b64 as string, 'base64')).metadata();
}

describe('the OpenAI Images API on tiffin diffusion start demo', () => {
  it('lists the model', async () => {
    const models = await client.models.list();
    expect(models.data.map((m) => m.id)).toHaveLength(1);
  });

  it('generates n images at the size and in the format asked', async () => {
    const result = await client.images.generate({
      model: 'demo',
      prompt: 'a red circle',
      n: 2,
      size: '64x64' as never,
      response_format: 'b64_json',
      output_format: 'webp',
      user: 'someone',
      // An unknown field is ignored, as OpenAI ignores them.
      ...({ style_preset: 'x' } as object),
    });
    expect(result.data).toHaveLength(2);
    for (const image of result.data ?? []) {
      const meta = await decoded(image.b64_json);
      expect(meta).toMatchObject({ format: 'webp', width: 64, height: 64 });
    }
  }, 120_000);

  it('answers url results the service serves for a while', async () => {
    const result = await client.images.generate({
      prompt: 'a blue square',
      response_format: 'url',
      output_format: 'jpeg',
    });
    const link = result.data?.[0]?.url as string;
    expect(link, link).toMatch(/\/v1\/images\/results\/[\w-]+$/);
    const res = await fetch(link);
    expect(res.status).toBe(200);
    expect((await sharp(Buffer.from(await res.arrayBuffer())).metadata()).format).toBe('jpeg');
    const gone = await fetch(`${url}/v1/images/results/not-an-id`);
    expect(gone.status).toBe(404);
    expect(((await gone.json()) as { error: { message: string } }).error.message).toBeTruthy();
  }, 120_000);

  it('edits with a mask (inpainting) and without one (image to image)', async () => {
    const image = await picture();
    const masked = await client.images.edit({
      image: await toFile(image, 'image.png', { type: 'image/png' }),
      mask: await toFile(await transparentRight(), 'mask.png', { type: 'image/png' }),
      prompt: 'a green triangle',
      response_format: 'b64_json',
      // Tiffin's extension: a seed makes the answer reproducible.
      ...({ seed: 7 } as object),
    });
    // The same as Tiffin's own /inpaint with the mask's transparent part white (repaint) and the same seed.
    const native = new FormData();
    native.set('image', new Blob([new Uint8Array(image)], { type: 'image/png' }), 'image.png');
    const white = await sharp(await transparentRight())
      .extractChannel(3)
      .negate()
      .png()
      .toBuffer();
    native.set('mask_image', new Blob([new Uint8Array(white)], { type: 'image/png' }), 'mask.png');
    native.set(
      'data',
      new Blob([JSON.stringify({ prompt: 'a green triangle', seed: 7, output_format: 'png' })], {
        type: 'application/json',
      }),
    );
    const res = await fetch(`${url}/inpaint`, {
      method: 'POST',
      body: native,
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(res.status).toBe(200);
    const pixels = (png: Buffer) => sharp(png).removeAlpha().raw().toBuffer();
    const out = Buffer.from(masked.data?.[0]?.b64_json as string, 'base64');
    expect(await sharp(out).metadata()).toMatchObject({ format: 'png', width: 64, height: 64 });
    expect((await pixels(out)).equals(await pixels(Buffer.from(await res.arrayBuffer())))).toBe(true);

    const plain = await client.images.edit({
      image: await toFile(image, 'image.png', { type: 'image/png' }),
      prompt: 'a green triangle',
      output_format: 'jpeg',
    });
    expect((await decoded(plain.data?.[0]?.b64_json)).format).toBe('jpeg');
  }, 180_000);

  it('makes variations', async () => {
    const result = await client.images.createVariation({
      image: await toFile(await picture(), 'image.png', { type: 'image/png' }),
      n: 1,
      response_format: 'b64_json',
    });
    expect(await decoded(result.data?.[0]?.b64_json)).toMatchObject({ format: 'png', width: 64, height: 64 });
  }, 120_000);

  it("refuses what the model cannot honour as the client's typed APIError", async () => {
    const tooBig = client.images.generate({ prompt: 'x', size: '1024x1024' });
    await expect(tooBig).rejects.toBeInstanceOf(OpenAI.BadRequestError);
    await expect(tooBig).rejects.toMatchObject({ status: 400, param: 'size', code: 'invalid_size' });
    await expect(client.images.generate({ prompt: 'x', n: 10 })).rejects.toMatchObject({
      status: 400,
      param: 'n',
    });
    const stranger = new OpenAI({ apiKey: 'wrong', baseURL: `${url}/v1`, maxRetries: 0 });
    const denied = stranger.images.generate({ prompt: 'x' });
    await expect(denied).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
    await expect(denied).rejects.toMatchObject({ status: 401 });
    await expect(
      client.images.edit({
        image: await toFile(Buffer.from('not an image at all'), 'image.png', { type: 'image/png' }),
        prompt: 'x',
      }),
    ).rejects.toMatchObject({ status: 400, param: 'image' });
  });

  it('answers hostile bodies with a 4xx in OpenAI error shape, never a 5xx', async () => {
    const auth = { authorization: `Bearer ${TOKEN}` };
    const json = { ...auth, 'content-type': 'application/json' };
    const cases: Array<[string, RequestInit]> = [
      ['/v1/images/generations', { method: 'POST', headers: json, body: '{"prompt": "x",' }],
      ['/v1/images/generations', { method: 'POST', headers: json, body: '[1,2]' }],
      ['/v1/images/generations', { method: 'POST', headers: json, body: '{"prompt":"x","n":1e9}' }],
      [
        '/v1/images/generations',
        { method: 'POST', headers: json, body: '{"prompt":"x","size":"99999999x9"}' },
      ],
      [
        '/v1/images/generations',
        { method: 'POST', headers: json, body: '{"prompt":"x","output_format":"gif"}' },
      ],
      [
        '/v1/images/generations',
        { method: 'POST', headers: json, body: `{"prompt":"${'é'.repeat(40_000)}"}` },
      ],
      ['/v1/images/generations', { method: 'POST', headers: json, body: 'x'.repeat(2 * 1024 * 1024) }],
      ['/v1/images/generations', { method: 'GET', headers: auth }],
      [
        '/v1/images/generations',
        { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' },
      ],
      [
        '/v1/images/edits',
        {
          method: 'POST',
          headers: { ...auth, 'content-type': 'multipart/form-data; boundary=zz' },
          body: '--zz\r\nContent-Disposition: form-data; name="image"; filename="a.png"\r\n\r\nabc',
        },
      ],
      ['/v1/images/edits', { method: 'POST', headers: json, body: '{"prompt":"x"}' }],
    ];
    const form = new FormData();
    form.set('prompt', 'x');
    cases.push(['/v1/images/edits', { method: 'POST', headers: auth, body: form }]);
    const variation = new FormData();
    variation.set('image', new Blob([new Uint8Array([0x89, 0x50, 0x4e, 0x47, 1, 2, 3])]), 'a.png');
    cases.push(['/v1/images/variations', { method: 'POST', headers: auth, body: variation }]);
    for (const [path, init] of cases) {
      const res = await fetch(`${url}${path}`, init);
      const body = (await res.json()) as {
        error: { message: string; type: string; param: unknown; code: unknown };
      };
      expect(res.status, `${path} ${String(init.body).slice(0, 60)}`).toBeGreaterThanOrEqual(400);
      expect(res.status).toBeLessThan(500);
      expect(typeof body.error.message).toBe('string');
      expect(typeof body.error.type).toBe('string');
      expect(body.error).toHaveProperty('param');
      expect(body.error).toHaveProperty('code');
      expect(JSON.stringify(body)).not.toMatch(/\/work\/|node_modules|at .*\.ts:/);
    }
  });
});
