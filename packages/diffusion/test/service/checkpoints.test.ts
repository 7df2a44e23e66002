import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MemoryLogger, type ServerHandle, serve } from '@tiffin/core';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDiffusionService } from '../../src/service/diffusion-service.js';
import { writeTinyPipeline } from '../../src/tiny/write-tiny-pipeline.js';

/**
 * Checkpoints per request (`modelsDir`): two tiny pipelines whose weights differ in one folder, chosen through the
 * native API (`model`), OpenAI's (`model`) and A1111's (`sd_model_checkpoint`, global and per request), one
 * loaded at a time. An unknown or hostile name is each API's own 4xx and never opens anything outside the folder.
 */
const models = mkdtempSync(join(tmpdir(), 'tiffin-sd-checkpoints-'));
const alpha = writeTinyPipeline(join(models, 'alpha'));
const beta = writeTinyPipeline(join(models, 'beta'), { weightSeed: 7 });
// Two steps whatever the API (OpenAI's has no steps field).
for (const dir of [alpha, beta])
  writeFileSync(join(dir, 'tiffin_defaults.json'), '{"num_inference_steps": 2}');
// Another family than the start model's: listed, refused by a request (its bounds are not the start model's).
writeTinyPipeline(join(models, 'xl'), { flavour: 'sdxl' });
// Not checkpoints: a folder without model_index.json, a text file, a hidden folder.
mkdirSync(join(models, 'notes'));
writeFileSync(join(models, 'readme.txt'), 'not a model\n');
// A single-file checkpoint is listed by its file name; this one is broken, so choosing it fails to load.
writeFileSync(join(models, 'gamma.safetensors'), 'not safetensors');
const logger = new MemoryLogger();
let server: ServerHandle;

beforeAll(async () => {
  const sd = createDiffusionService({ modelDir: alpha, modelsDir: models, backend: 'wasm', logger });
  server = await serve(sd.service, { port: 0, host: '127.0.0.1', logger, handleSignals: false });
}, 120_000);

afterAll(async () => {
  await server?.close();
});

async function call(method: string, path: string, body?: unknown) {
  const res = await fetch(`${server.url}${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const type = res.headers.get('content-type') ?? '';
  const bytes = Buffer.from(await res.arrayBuffer());
  // biome-ignore lint/suspicious/noExplicitAny: the answers of three APIs, read field by field and checked by expect
  type Json = Record<string, any>;
  return {
    status: res.status,
    bytes,
    json: type.includes('json') ? (JSON.parse(bytes.toString('utf8')) as Json) : {},
  };
}

const pixels = (bytes: Buffer) => sharp(bytes).raw().toBuffer();
const prompt = { prompt: 'a cat', seed: 5 };

async function native(model?: string) {
  const res = await call('POST', '/text2img', {
    ...prompt,
    num_inference_steps: 2,
    height: 32,
    width: 32,
    output_format: 'png',
    ...(model === undefined ? {} : { model }),
  });
  expect(res.status).toBe(200);
  return pixels(res.bytes);
}

async function openai(model?: string) {
  const res = await call('POST', '/v1/images/generations', {
    ...prompt,
    size: '32x32',
    ...(model === undefined ? {} : { model }),
  });
  expect(res.status).toBe(200);
  return pixels(Buffer.from(res.json.data[0].b64_json, 'base64'));
}

async function a1111(override?: string) {
  const res = await call('POST', '/sdapi/v1/txt2img', {
    ...prompt,
    steps: 2,
    width: 32,
    height: 32,
    ...(override === undefined ? {} : { override_settings: { sd_model_checkpoint: override } }),
  });
  expect(res.status).toBe(200);
  return { image: await pixels(Buffer.from(res.json.images[0], 'base64')), info: JSON.parse(res.json.info) };
}

/** Names that must never reach a file: traversal, absolute paths, a checkpoint's own path, non-ASCII, huge. */
const hostile = ['../alpha', `${models}/beta`, '/etc/passwd', 'beta/../alpha', 'bëta', 'x'.repeat(200)];

describe('checkpoints per request', () => {
  it('lists the checkpoints of the folder in every API', async () => {
    const listed = await call('GET', '/models');
    expect(listed.json).toMatchObject({ default: 'alpha', max_loaded: 1 });
    const names = ['alpha', 'beta', 'gamma.safetensors', 'xl'];
    expect(listed.json.models.map((m: { name: string }) => m.name)).toEqual(names);
    const v1 = await call('GET', '/v1/models');
    expect(v1.json.data.map((m: { id: string }) => m.id)).toEqual(['stable-diffusion', ...names]);
    const sd = await call('GET', '/sdapi/v1/sd-models');
    const [a, b, c] = sd.json as unknown as Array<{ model_name: string; hash: string; title: string }>;
    expect([a.model_name, b.model_name, c.model_name]).toEqual(['alpha', 'beta', 'gamma']);
    expect(a.hash).not.toBe(b.hash);
    expect(b.title).toBe(`beta [${b.hash}]`);
  });

  it('generates with the checkpoint the native model field names, one loaded at a time', async () => {
    const [byDefault, a, b] = [await native(), await native('alpha'), await native('beta')];
    expect(a).toEqual(byDefault);
    expect(b).not.toEqual(a);
    const listed = await call('GET', '/models');
    expect(listed.json.models).toEqual([
      { name: 'alpha', loaded: false },
      { name: 'beta', loaded: true },
      { name: 'gamma.safetensors', loaded: false },
      { name: 'xl', loaded: false },
    ]);
    // A checkpoint that does not load fails its request alone, named without its server path.
    const broken = await call('POST', '/text2img', { ...prompt, model: 'gamma' });
    expect(broken.status).toBeGreaterThanOrEqual(400);
    expect(broken.bytes.toString()).not.toContain(models);
    const xl = await call('POST', '/text2img', { ...prompt, model: 'xl' });
    expect(xl.status).toBe(400);
    expect(xl.json.error).toMatch(/SDXL checkpoint/);
    // Back to alpha: reloaded, the same image as before the switch.
    expect(await native('alpha')).toEqual(a);
    const loads = logger.records.filter((r) => r.msg === 'diffusion checkpoint loaded');
    expect(loads.map((r) => r.model)).toEqual(['beta', 'alpha']);
  }, 120_000);

  it("generates with OpenAI's model", async () => {
    const [byDefault, byName, a, b] = [
      await openai(),
      await openai('stable-diffusion'),
      await openai('alpha'),
      await openai('beta'),
    ];
    expect(a).toEqual(byDefault);
    expect(byName).toEqual(byDefault);
    expect(b).not.toEqual(a);
  }, 120_000);

  it("generates with A1111's sd_model_checkpoint, global and per request", async () => {
    const a = await a1111();
    expect(a.info.sd_model_name).toBe('alpha');
    const titles = (await call('GET', '/sdapi/v1/sd-models')).json as unknown as Array<{ title: string }>;
    expect((await call('POST', '/sdapi/v1/options', { sd_model_checkpoint: titles[1].title })).status).toBe(
      200,
    );
    expect((await call('GET', '/sdapi/v1/options')).json.sd_model_checkpoint).toBe(titles[1].title);
    const b = await a1111();
    expect(b.info.sd_model_name).toBe('beta');
    expect(b.image).not.toEqual(a.image);
    // This request's override only: alpha's image, and the global setting stays beta.
    const overridden = await a1111('alpha');
    expect(overridden.image).toEqual(a.image);
    expect((await call('GET', '/sdapi/v1/options')).json.sd_model_checkpoint).toBe(titles[1].title);
    expect((await call('POST', '/sdapi/v1/options', { sd_model_checkpoint: 'alpha' })).status).toBe(200);
  }, 120_000);

  it("answers an unknown or hostile name in each API's own error shape", async () => {
    for (const name of ['delta', 'notes', 'readme.txt', ...hostile]) {
      const nat = await call('POST', '/text2img', { ...prompt, model: name });
      expect([404, 400]).toContain(nat.status);
      expect(['NOT_FOUND', 'INVALID_INPUT']).toContain(nat.json.code);
      const oa = await call('POST', '/v1/images/generations', { ...prompt, model: name });
      expect(oa.status).toBe(404);
      expect(oa.json.error).toMatchObject({ code: 'model_not_found', param: 'model' });
      const set = await call('POST', '/sdapi/v1/options', { sd_model_checkpoint: name });
      expect(set.status).toBe(422);
      expect(set.json.detail).toContain('not found');
      const over = await call('POST', '/sdapi/v1/txt2img', {
        ...prompt,
        override_settings: { sd_model_checkpoint: name },
      });
      expect(over.status).toBe(422);
      // No server path is ever echoed.
      for (const answer of [nat, oa, set, over]) expect(answer.bytes.toString()).not.toContain(models);
    }
    expect((await call('GET', '/sdapi/v1/options')).json.sd_model_checkpoint).toMatch(/^alpha /);
  }, 60_000);

  it('finds a checkpoint folder copied in while serving: listed, and chosen by name', async () => {
    const beta = await native('beta');
    // A copy of beta under another name (the same weights): its answer is beta's image.
    writeTinyPipeline(join(models, 'late'), { weightSeed: 7 });
    const listed = await call('GET', '/models');
    expect(listed.json.models.map((m: { name: string }) => m.name)).toContain('late');
    expect(await native('late')).toEqual(beta);
    const v1 = await call('GET', '/v1/models');
    expect(v1.json.data.map((m: { id: string }) => m.id)).toContain('late');
  }, 120_000);
});
