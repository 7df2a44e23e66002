import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { MemoryLogger, type ServerHandle, serve } from '@tiffin/core';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { A1111_SAMPLER_LIST, isServed, servedSamplers } from '../../src/service/compat/a1111/samplers.js';
import { createDiffusionService } from '../../src/service/diffusion-service.js';
import { readPngText } from '../../src/service/png-text.js';
import { tinyDir } from '../helpers/tiny.js';
import { waitFor } from './compat-helpers.js';

/**
 * AUTOMATIC1111's API as its clients and scripts call it (plain fetch with A1111's bodies, as the docs' scripts do):
 * PNGs carry A1111's `parameters` infotext, which `png-info` reads back; the model's name and short hash; the
 * listing and settings routes; sampler names in both of A1111's forms, and a 422 naming the served ones for a
 * sampler Tiffin does not run; an interrupt keeps the image made so far; an upload over the bound is a size error.
 */
const modelDir = tinyDir('sd1');
let server: ServerHandle;

beforeAll(async () => {
  const sd = createDiffusionService({ modelDir, backend: 'wasm', logger: new MemoryLogger() });
  server = await serve(sd.service, { port: 0, host: '127.0.0.1', logger: false, handleSignals: false });
}, 120_000);

afterAll(async () => {
  await server?.close();
});

interface Answer {
  status: number;
  headers: Headers;
  body: Record<string, unknown> & { images?: string[]; info?: string; error?: string; detail?: string };
}

async function call(method: string, path: string, body?: unknown): Promise<Answer> {
  const res = await fetch(`${server.url}/sdapi/v1/${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as Answer['body'] };
}

const txt2img = (extra: Record<string, unknown> = {}) =>
  call('POST', 'txt2img', {
    prompt: 'a red circle',
    negative_prompt: 'blue',
    steps: 3,
    seed: 7,
    width: 32,
    height: 32,
    ...extra,
  });

/** A `width`×`height` PNG of one colour. */
const solidPng = (width: number, height: number) =>
  sharp({ create: { width, height, channels: 3, background: '#c02020' } })
    .png()
    .toBuffer();

const expectedHash = () =>
  createHash('sha256')
    .update(readFileSync(join(modelDir, 'unet', 'diffusion_pytorch_model.safetensors')))
    .digest('hex');

describe("A1111's infotext, model hash and png-info", () => {
  it("writes A1111's infotext in every PNG and in info, with the model's name and short hash", async () => {
    const answer = await txt2img({ sampler_name: 'DPM++ 2M', scheduler: 'Karras', cfg_scale: 6.5 });
    expect(answer.status, JSON.stringify(answer.body).slice(0, 300)).toBe(200);
    const png = Buffer.from(answer.body.images?.[0] ?? '', 'base64');
    const { parameters } = readPngText(png);
    const short = expectedHash().slice(0, 10);
    const name = modelDir.split('/').pop();
    expect(parameters).toBe(
      `a red circle\nNegative prompt: blue\nSteps: 3, Sampler: DPM++ 2M, Schedule type: Karras, CFG scale: 6.5, Seed: 7, Size: 32x32, Model hash: ${short}, Model: ${name}`,
    );
    const info = JSON.parse(answer.body.info ?? '{}') as Record<string, unknown>;
    expect(info).toMatchObject({ infotexts: [parameters], sd_model_hash: short, sd_model_name: name });
    // png-info reads it back, as A1111 parses it.
    const read = await call('POST', 'png-info', {
      image: `data:image/png;base64,${answer.body.images?.[0]}`,
    });
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({
      info: parameters,
      parameters: {
        Prompt: 'a red circle',
        Steps: '3',
        Sampler: 'DPM++ 2M',
        Seed: '7',
        'Size-1': '32',
        'Model hash': short,
      },
    });

    const [model] = (await call('GET', 'sd-models')).body as unknown as Array<Record<string, unknown>>;
    expect(model).toMatchObject({
      model_name: name,
      hash: short,
      sha256: expectedHash(),
      title: `${name} [${short}]`,
    });
    expect(JSON.stringify(model)).not.toContain('/tmp');
    expect((await call('GET', 'options')).body).toMatchObject({ sd_model_checkpoint: `${name} [${short}]` });
  }, 120_000);

  it('refuses hostile png-info bodies with a 4xx in A1111 shape', async () => {
    const png = await solidPng(8, 8);
    const lying = Buffer.from(png);
    lying.writeUInt32BE(0x7fffffff, 8); // IHDR declares a chunk of 2 GiB.
    for (const body of [
      {},
      { image: 42 },
      { image: 'bm90IGFuIGltYWdl' },
      { image: lying.toString('base64') },
    ]) {
      const answer = await call('POST', 'png-info', body);
      expect(answer.status, JSON.stringify(body).slice(0, 60)).toBe(422);
      expect(typeof answer.body.detail).toBe('string');
    }
    // A PNG with no infotext: an empty info, as A1111 answers.
    expect((await call('POST', 'png-info', { image: png.toString('base64') })).body).toEqual({
      info: '',
      items: {},
      parameters: {},
    });
  });
});

describe("A1111's listings and settings", () => {
  it('lists schedulers, upscalers, cmd-flags and prompt-styles, and refreshes checkpoints', async () => {
    const schedulers = (await call('GET', 'schedulers')).body as unknown as Array<{
      name: string;
      label: string;
    }>;
    expect(schedulers.map((s) => s.label)).toEqual(['Automatic', 'Karras']);
    const upscalers = (await call('GET', 'upscalers')).body as unknown as Array<{ name: string }>;
    expect(upscalers.map((u) => u.name)).toEqual(['None', 'Lanczos', 'Nearest']);
    expect((await call('GET', 'cmd-flags')).body).toMatchObject({ api: true });
    expect((await call('GET', 'prompt-styles')).body).toEqual([]);
    const refreshed = await call('POST', 'refresh-checkpoints', {});
    expect([refreshed.status, refreshed.body]).toEqual([200, null]);
  });

  it('honours the settings it can, names the ignored ones, refuses another model', async () => {
    const set = await call('POST', 'options', {
      samples_format: 'jpg',
      jpeg_quality: 90,
      sd_vae: 'x',
      eta_ddim: 0.1,
    });
    expect([set.status, set.body]).toEqual([200, null]);
    expect(set.headers.get('x-tiffin-ignored-options')).toBe('sd_vae, eta_ddim');
    const jpeg = await txt2img();
    expect((await sharp(Buffer.from(jpeg.body.images?.[0] ?? '', 'base64')).metadata()).format).toBe('jpeg');
    expect((await call('GET', 'options')).body).toMatchObject({ samples_format: 'jpg', jpeg_quality: 90 });
    expect((await call('POST', 'options', { samples_format: 'png' })).status).toBe(200);
    const other = await call('POST', 'options', {
      sd_model_checkpoint: 'v1-5-pruned.safetensors [6ce0161689]',
    });
    expect(other.status).toBe(422);
    expect(other.body.detail).toContain('not found');
    expect((await call('POST', 'options', { jpeg_quality: 'high' })).status).toBe(422);
    // Hostile settings: too many keys, a key named __proto__, a body that is no object: 4xx, nothing changed.
    const many = Object.fromEntries(Array.from({ length: 2000 }, (_, i) => [`k${i}`, i]));
    expect((await call('POST', 'options', many)).status).toBe(422);
    const proto = await call('POST', 'options', JSON.parse('{"__proto__": {"samples_format": "webp"}}'));
    expect(proto.headers.get('x-tiffin-ignored-options')).toBe('__proto__');
    expect((await call('POST', 'options', [1, 2])).status).toBe(422);
    expect((await call('GET', 'options')).body).toMatchObject({ samples_format: 'png' });
  }, 120_000);
});

describe("A1111's sampler names", () => {
  it('runs the 1.9+ form and the older one alike, and refuses what it does not run', async () => {
    const current = await txt2img({ sampler_name: 'DPM++ 2M', scheduler: 'karras' });
    const old = await txt2img({ sampler_name: 'DPM++ 2M Karras' });
    expect(old.body.images?.[0]).toBe(current.body.images?.[0]);
    // Every A1111 sampler whose scheduler Tiffin does not implement (yet): a 422 naming the served ones.
    const served = servedSamplers().map((x) => x.name);
    for (const { name } of A1111_SAMPLER_LIST.filter((x) => !isServed(x))) {
      const refused = await txt2img({ sampler_name: name });
      expect(refused.status, name).toBe(422);
      expect(refused.body.error).toBe('SAMPLER_NOT_SERVED');
      expect(refused.body.detail).toContain(`${JSON.stringify(name)} is not served`);
      expect(refused.body.detail).toContain(served.join(', '));
    }
  }, 120_000);
});

describe("A1111's img2img infotext", () => {
  it('names the image size and the denoising strength', async () => {
    const init = await solidPng(40, 24);
    const answer = await call('POST', 'img2img', {
      prompt: 'x',
      steps: 2,
      seed: 1,
      denoising_strength: 0.5,
      init_images: [init.toString('base64')],
    });
    expect(answer.status, JSON.stringify(answer.body).slice(0, 200)).toBe(200);
    const { parameters } = readPngText(Buffer.from(answer.body.images?.[0] ?? '', 'base64'));
    expect(parameters).toContain('Size: 40x24');
    expect(parameters).toMatch(/Denoising strength: 0\.5$/);
  }, 120_000);
});

describe('an A1111 upload over the bound', () => {
  it('is a size error named as one, not "not a PNG"', async () => {
    const big = await solidPng(4200, 4200);
    const answer = await call('POST', 'img2img', {
      prompt: 'x',
      steps: 2,
      init_images: [big.toString('base64')],
    });
    expect(answer.status).toBe(422);
    expect(answer.body.error).toBe('IMAGE_TOO_LARGE');
    expect(answer.body.detail).toContain('4200×4200');
  }, 120_000);
});

describe('an interrupted A1111 job', () => {
  it('answers the image made so far, as A1111 does', async () => {
    const body = { prompt: 'a green triangle', steps: 40, seed: 3, width: 32, height: 32 };
    const job = call('POST', 'txt2img', body);
    await waitFor(async () => {
      const p = (await call('GET', 'progress?skip_current_image=true')).body as {
        state: { sampling_step: number };
      };
      return p.state.sampling_step > 0;
    });
    expect((await call('POST', 'interrupt', {})).status).toBe(200);
    const answer = await job;
    expect(answer.status).toBe(200);
    expect(answer.body.images).toHaveLength(1);
    const partial = await sharp(Buffer.from(answer.body.images?.[0] ?? '', 'base64')).metadata();
    expect([partial.width, partial.height]).toEqual([32, 32]);
    expect(readPngText(Buffer.from(answer.body.images?.[0] ?? '', 'base64')).parameters).toContain('Seed: 3');
    // Not the finished image of the same seed: the generation stopped early.
    const full = await call('POST', 'txt2img', body);
    expect(full.body.images?.[0]).not.toBe(answer.body.images?.[0]);
  }, 180_000);
});
