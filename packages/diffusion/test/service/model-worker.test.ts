import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LoraCache } from '../../src/lora/cache.js';
import { mergeLora } from '../../src/lora/merge.js';
import { StableDiffusionPipeline } from '../../src/pipeline/pipeline.js';
import type { Text2ImgRequest } from '../../src/pipeline/types.js';
import { type JobOutcome, ModelWorkerHost } from '../../src/service/worker-host.js';
import type { JobInput } from '../../src/service/worker-protocol.js';
import { writeSafetensors } from '../../src/weights/safetensors.js';
import { tinyDir } from '../helpers/tiny.js';
import { writeTinyLora } from './service-helpers.js';

/**
 * The model worker with a start-up LoRA (`--lora-weights`) and per-request LoRA files, compared pixel
 * for pixel with a pipeline in this process: raw RGB, no JPEG in between.
 */
const modelDir = tinyDir('sd1');
const loraDir = mkdtempSync(join(tmpdir(), 'tiffin-sd-worker-lora-'));
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

let host: ModelWorkerHost;
let reference: StableDiffusionPipeline;
/** In-process images: the bare model, and the model with the start-up LoRA merged. */
let bare: Uint8Array;
let withBase: Uint8Array;

const pixels = (outcome: JobOutcome) => Buffer.from(outcome.images[0].data);

beforeAll(async () => {
  host = await ModelWorkerHost.start({ modelDir, backend: 'wasm', baseLoraPath: baseLora, loraCacheSize: 2 });
  reference = await StableDiffusionPipeline.fromPretrained(modelDir, { backend: 'wasm', log: () => {} });
  bare = (await reference.text2img(request(7))).images[0].data;
  mergeLora(reference.loraTarget, new LoraCache(1).get(baseLora));
  withBase = (await reference.text2img(request(7))).images[0].data;
}, 120_000);

afterAll(async () => {
  await host?.close();
  reference?.dispose();
});

describe('model worker LoRA', () => {
  it('applies the start-up LoRA to every request', async () => {
    expect(Buffer.from(withBase).equals(Buffer.from(bare))).toBe(false);
    const plain = await host.run('r1', job(7));
    expect(pixels(plain).equals(Buffer.from(withBase))).toBe(true);
  });

  it("runs a request's LoRA unfused on top of the start-up LoRA, then leaves exactly the pre-request state", async () => {
    const before = pixels(await host.run('r2', job(7)));
    const lora = pixels(
      await host.run('r3', job(7), { loras: [{ path: styleLora, name: 'lora.safetensors', weight: 1 }] }),
    );
    expect(lora.equals(before)).toBe(false);
    // The same as the in-process pipeline (start-up LoRA merged) running the request LoRA unfused.
    const file = new LoraCache(1).get(styleLora);
    const expected = (await reference.text2img({ ...request(7), lora: { file, mode: 'unfused' } })).images[0];
    expect(lora.equals(Buffer.from(expected.data))).toBe(true);
    const after = pixels(await host.run('r4', job(7)));
    expect(after.equals(before)).toBe(true);
    expect(after.equals(Buffer.from(withBase))).toBe(true);
  });

  it('gives the same images for jobs sent together (one with a LoRA) as for jobs sent one by one', async () => {
    const oneByOne = [
      pixels(await host.run('s1', job(3))),
      pixels(
        await host.run('s2', job(4), { loras: [{ path: styleLora, name: 'lora.safetensors', weight: 1 }] }),
      ),
      pixels(await host.run('s3', job(3))),
    ];
    // The worker runs jobs in arrival order, one at a time (they share its one thread).
    const together = await Promise.all([
      host.run('t1', job(3)),
      host.run('t2', job(4), { loras: [{ path: styleLora, name: 'lora.safetensors', weight: 1 }] }),
      host.run('t3', job(3)),
    ]);
    together.forEach((outcome, i) => {
      expect(pixels(outcome).equals(oneByOne[i])).toBe(true);
    });
    expect(oneByOne[0].equals(oneByOne[2])).toBe(true);
  });

  it('refuses a LoRA that matches nothing in the model as a client error, and keeps serving', async () => {
    const foreignLora = join(loraDir, 'other.safetensors');
    // A LoRA for a module the tiny UNet does not have.
    writeSafetensors(foreignLora, {
      'unet.nowhere.to_q.lora_A.weight': { shape: [2, 4], data: new Float32Array(8).fill(0.1) },
      'unet.nowhere.to_q.lora_B.weight': { shape: [4, 2], data: new Float32Array(8).fill(0.1) },
    });
    const err = await host
      .run('bad', job(7), { loras: [{ path: foreignLora, name: 'lora.safetensors', weight: 1 }] })
      .catch((e: Error) => e);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error & { httpStatus?: number }).httpStatus).toBe(400);
    expect((err as Error).message).toMatch(/unet\.nowhere\.to_q/);
    expect(pixels(await host.run('ok', job(7))).equals(Buffer.from(withBase))).toBe(true);
  });

  it('reports a worker that is gone as its failure reason (the service readiness check reads it)', async () => {
    expect(host.failureReason).toBeUndefined();
    await host.close();
    expect(host.failureReason).toMatch(/model worker exited/);
    const err = await host.run('late', job(7)).catch((e: Error) => e);
    expect((err as Error & { httpStatus?: number }).httpStatus).toBe(503);
  });
});
