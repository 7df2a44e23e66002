import { copyFileSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MemoryLogger, type ServerHandle, serve } from '@tiffin/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDiffusionService } from '../../src/service/diffusion-service.js';
import { tinyDir } from '../helpers/tiny.js';
import { jpegSize, writeTinyLora } from './service-helpers.js';

/**
 * Model-owned defaults over HTTP on the tiny pipeline: the folder's `tiffin_defaults.json` fills what a request
 * leaves out, `GET /defaults` and `/docs.json` show it, an LCM-LoRA (by name) or a LoRA's own defaults file switches
 * the scheduler, steps and guidance unless the request says otherwise.
 */
const work = mkdtempSync(join(tmpdir(), 'tiffin-sd-defaults-'));
const loraDir = join(work, 'loras');
const modelDir = tinyDir('sd1');
const logger = new MemoryLogger();
let handle: ServerHandle;

const post = (path: string, body: unknown) =>
  fetch(`${handle.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

/** The bytes of a 200 answer and the step count the generation logged. */
async function generate(body: Record<string, unknown>): Promise<{ bytes: Buffer; steps: number }> {
  const res = await post('/text2img', { prompt: 'a tiny cat', seed: 3, ...body });
  expect(res.status).toBe(200);
  const bytes = Buffer.from(await res.arrayBuffer());
  const id = res.headers.get('x-request-id');
  const steps = logger.records.filter((r) => r.msg === 'generation step' && r.requestId === id);
  return { bytes, steps: Number(steps.at(-1)?.totalSteps) };
}

beforeAll(async () => {
  writeFileSync(
    join(modelDir, 'tiffin_defaults.json'),
    JSON.stringify({
      scheduler: 'euler',
      scheduler_config: { timestep_spacing: 'trailing' },
      num_inference_steps: 2,
      guidance_scale: 0,
      height: 16,
      width: 24,
      negative_prompt: 'blurry',
    }),
  );
  const lcm = writeTinyLora(loraDir, 'lcm-lora-tiny.safetensors', 'lcm');
  copyFileSync(lcm, join(loraDir, 'style.safetensors'));
  writeFileSync(join(loraDir, 'style.tiffin_defaults.json'), JSON.stringify({ num_inference_steps: 3 }));
  const sd = createDiffusionService({ modelDir, loraDir, backend: 'onnxruntime', logger });
  handle = await serve(sd.service, { port: 0, host: '127.0.0.1', logger: false, handleSignals: false });
}, 120_000);

afterAll(async () => {
  await handle?.close();
});

describe("a model folder's tiffin_defaults.json", () => {
  it('is what GET /defaults answers, with the size limit from the model', async () => {
    const res = await fetch(`${handle.url}/defaults`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      scheduler: 'euler',
      scheduler_config: { timestep_spacing: 'trailing' },
      num_inference_steps: 2,
      guidance_scale: 0,
      negative_prompt: 'blurry',
      height: 16,
      width: 24,
      // Twice the model's own size: the larger of the tiny unet's 32 px and the defaults' 16 × 24.
      max_size: 64,
    });
  });

  it('shows in /docs.json as the fields’ defaults', async () => {
    const doc = (await (await fetch(`${handle.url}/docs.json`)).json()) as {
      paths: Record<string, { post: { requestBody: { content: Record<string, { schema: unknown }> } } }>;
      components?: { schemas?: Record<string, unknown> };
    };
    const text = JSON.stringify(doc);
    const schema = JSON.stringify(doc.paths['/text2img'].post.requestBody.content);
    const body = schema.includes('$ref') ? text : schema;
    expect(body).toMatch(/"num_inference_steps":\{[^}]*"default":2/);
    expect(body).toMatch(/"guidance_scale":\{[^}]*"default":0/);
    expect(body).toMatch(/"height":\{[^}]*"default":16/);
  });

  it('fills what a request leaves out; a request’s own value wins', async () => {
    const plain = await generate({});
    expect(jpegSize(plain.bytes)).toEqual({ width: 24, height: 16 });
    expect(plain.steps).toBe(2);
    const explicit = await generate({
      scheduler: 'euler',
      num_inference_steps: 2,
      guidance_scale: 0,
      height: 16,
      width: 24,
      negative_prompt: 'blurry',
    });
    expect(explicit.bytes.equals(plain.bytes)).toBe(true);
    const overridden = await generate({ num_inference_steps: 1 });
    expect(overridden.steps).toBe(1);
  });

  it('takes timestep_spacing and use_karras_sigmas per request over the defaults’ scheduler config', async () => {
    const trailing = await generate({});
    const linspace = await generate({ timestep_spacing: 'linspace' });
    expect(linspace.bytes.equals(trailing.bytes)).toBe(false);
    // Two Karras levels are the schedule's own two ends: three steps tell them apart.
    const three = await generate({ num_inference_steps: 3 });
    const karras = await generate({ num_inference_steps: 3, use_karras_sigmas: true });
    expect(karras.bytes.equals(three.bytes)).toBe(false);
    const unused = await post('/text2img', { prompt: 'x', scheduler: 'ddim', use_karras_sigmas: true });
    expect(unused.status).toBe(400);
    expect(await unused.json()).toMatchObject({ error: expect.stringMatching(/use_karras_sigmas/) });
    const bad = await post('/text2img', { prompt: 'x', timestep_spacing: 'sideways' });
    expect(bad.status).toBe(400);
  });

  it('refuses sizes above twice the model’s size (400, before any work)', async () => {
    const res = await post('/text2img', { prompt: 'x', height: 72, width: 72 });
    expect(res.status).toBe(400);
  });
});

describe('LoRA defaults', () => {
  it('an LCM-LoRA by name brings lcm, 4 steps, guidance 1 unless the request says otherwise', async () => {
    const lcm = await generate({ lora_weights: 'lcm-lora-tiny.safetensors' });
    expect(lcm.steps).toBe(4);
    const spelled = await generate({
      lora_weights: 'lcm-lora-tiny.safetensors',
      scheduler: 'lcm',
      num_inference_steps: 4,
      guidance_scale: 1,
    });
    expect(spelled.bytes.equals(lcm.bytes)).toBe(true);
    const euler = await generate({ lora_weights: 'lcm-lora-tiny.safetensors', scheduler: 'euler' });
    expect(euler.steps).toBe(4);
    expect(euler.bytes.equals(lcm.bytes)).toBe(false);
    const twoSteps = await generate({ lora_weights: 'lcm-lora-tiny.safetensors', num_inference_steps: 2 });
    expect(twoSteps.steps).toBe(2);
  });

  it("a LoRA's own defaults file beside it applies to what the request leaves out", async () => {
    const style = await generate({ lora_weights: 'style.safetensors' });
    expect(style.steps).toBe(3);
  });
});

describe('an invalid defaults file', () => {
  it('stops the start with a message naming the file and key', () => {
    const dir = tinyDir('sd1');
    writeFileSync(join(dir, 'tiffin_defaults.json'), JSON.stringify({ guidance: 2 }));
    expect(() => createDiffusionService({ modelDir: dir })).toThrow(/tiffin_defaults\.json.*guidance/);
    writeFileSync(join(dir, 'tiffin_defaults.json'), '{not json');
    expect(() => createDiffusionService({ modelDir: dir })).toThrow(/tiffin_defaults\.json/);
  });
});
