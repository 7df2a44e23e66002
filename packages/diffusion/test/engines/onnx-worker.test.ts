import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LoraCache } from '../../src/lora/cache.js';
import { mergeLora } from '../../src/lora/merge.js';
import { StableDiffusionPipeline } from '../../src/pipeline/pipeline.js';
import type { Text2ImgRequest } from '../../src/pipeline/types.js';
import { type JobOutcome, ModelWorkerHost } from '../../src/service/worker-host.js';
import type { JobInput } from '../../src/service/worker-protocol.js';
import { tinyDir } from '../helpers/tiny.js';
import { writeTinyLora } from '../service/service-helpers.js';

/**
 * The service's model worker on onnxruntime (graphs cached where $TIFFIN_ONNX_CACHE says), with a
 * start-up LoRA and a request LoRA, pixel for pixel against an onnxruntime pipeline in this process.
 */
const modelDir = tinyDir('sd1');
const cacheDir = mkdtempSync(join(tmpdir(), 'tiffin-onnx-worker-cache-'));
const loraDir = mkdtempSync(join(tmpdir(), 'tiffin-onnx-worker-lora-'));
const baseLora = writeTinyLora(loraDir, 'base.safetensors', 'base');
const styleLora = writeTinyLora(loraDir, 'style.safetensors', 'style');
const params = {
  prompt: 'a tiny cat',
  negative_prompt: null,
  num_inference_steps: 2,
  guidance_scale: 7.5,
  eta: 0,
  scheduler: null,
  num_images_per_prompt: 1,
  guidance_rescale: 0,
  clip_skip: 0,
};
const job = (seed: number): JobInput => ({
  kind: 'text2img',
  params: { ...params, seed },
  height: 16,
  width: 24,
});
const request = (seed: number): Text2ImgRequest => ({ ...params, seed, height: 16, width: 24 });
const pixels = (outcome: JobOutcome) => Buffer.from(outcome.images[0].data);

let host: ModelWorkerHost;
let reference: StableDiffusionPipeline;

beforeAll(async () => {
  process.env.TIFFIN_ONNX_CACHE = cacheDir;
  host = await ModelWorkerHost.start({
    modelDir,
    backend: 'onnxruntime',
    baseLoraPath: baseLora,
    loraCacheSize: 2,
  });
  reference = await StableDiffusionPipeline.fromPretrained(modelDir, {
    backend: 'onnxruntime',
    log: () => {},
  });
  mergeLora(reference.loraTarget, new LoraCache(1).get(baseLora));
}, 120_000);

afterAll(async () => {
  await host?.close();
  reference?.dispose();
  delete process.env.TIFFIN_ONNX_CACHE;
  for (const d of [modelDir, cacheDir, loraDir]) rmSync(d, { recursive: true, force: true });
});

describe('model worker on onnxruntime', () => {
  it('reports the backend and caches the graphs where TIFFIN_ONNX_CACHE says', () => {
    expect(host.backend).toBe('onnxruntime');
    expect(
      readdirSync(cacheDir)
        .map((d) => d.split('-')[0])
        .sort(),
    ).toEqual(['text_encoder', 'unet', 'vae_decoder', 'vae_encoder']);
  });

  it('applies the start-up LoRA, a request LoRA on top, then the pre-request state again', async () => {
    const withBase = Buffer.from((await reference.text2img(request(7))).images[0].data);
    const before = pixels(await host.run('r1', job(7)));
    expect(before.equals(withBase)).toBe(true);
    const lora = pixels(
      await host.run('r2', job(7), { loras: [{ path: styleLora, name: 'style.safetensors', weight: 1 }] }),
    );
    expect(lora.equals(before)).toBe(false);
    const file = new LoraCache(1).get(styleLora);
    const expected = (await reference.text2img({ ...request(7), lora: { file, mode: 'unfused' } })).images[0];
    expect(lora.equals(Buffer.from(expected.data))).toBe(true);
    expect(pixels(await host.run('r3', job(7))).equals(before)).toBe(true);
  });
});
