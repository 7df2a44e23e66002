import { rmSync } from 'node:fs';
import * as tf from '@tensorflow/tfjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClipTextEncoder } from '../src/engines/tfjs/clip-text-encoder.js';
import type { UNet2DConditionModel } from '../src/engines/tfjs/unet.js';
import { StableDiffusionPipeline } from '../src/pipeline/pipeline.js';
import type { GenerationProgress } from '../src/pipeline/types.js';
import { detWeight } from '../src/weights/deterministic.js';
import { tinyDir } from './helpers/tiny.js';

describe('StableDiffusionPipeline behaviour (tiny sd1, wasm)', () => {
  let dir: string;
  let pipe: StableDiffusionPipeline;
  beforeAll(async () => {
    dir = tinyDir('sd1');
    pipe = await StableDiffusionPipeline.fromPretrained(dir, { backend: 'wasm', log: () => {} });
  });
  afterAll(() => {
    pipe?.dispose();
    rmSync(dir, { recursive: true, force: true });
  });

  const request = { prompt: 'a cat', negative_prompt: 'dog', num_inference_steps: 3 };

  it('defaults the size from the folder (sample_size × VAE factor) and returns RGB uint8', async () => {
    expect(pipe.defaultSize).toBe(32);
    const out = await pipe.text2img({ ...request, seed: 1 });
    expect(out.images).toHaveLength(1);
    expect(out.images[0]).toMatchObject({ width: 32, height: 32 });
    expect(out.images[0].data).toBeInstanceOf(Uint8Array);
    expect(out.images[0].data.length).toBe(32 * 32 * 3);
    expect(out.seed).toBe(1);
    expect(out.scheduler).toBe('pndm');
  });

  it('same seed → same image; different seed → different image', async () => {
    const a = await pipe.text2img({ ...request, seed: 42, scheduler: 'euler_a' });
    const b = await pipe.text2img({ ...request, seed: 42, scheduler: 'euler_a' });
    const c = await pipe.text2img({ ...request, seed: 43, scheduler: 'euler_a' });
    expect(Buffer.from(a.images[0].data).equals(Buffer.from(b.images[0].data))).toBe(true);
    expect(Buffer.from(a.images[0].data).equals(Buffer.from(c.images[0].data))).toBe(false);
  });

  it('does not grow tfjs memory across generations', async () => {
    await pipe.text2img({ ...request, seed: 5 });
    const before = tf.memory().numTensors;
    for (let i = 0; i < 2; i++) {
      await pipe.text2img({ ...request, seed: i, scheduler: 'dpmpp_2m', num_images_per_prompt: 2 });
      await pipe.img2img({
        ...request,
        seed: i,
        image: { width: 32, height: 32, data: new Uint8Array(32 * 32 * 3).fill(128) },
        strength: 0.7,
      });
    }
    expect(tf.memory().numTensors).toBe(before);
    await expect(pipe.text2img({ ...request, height: 30 })).rejects.toThrow(/multiple of 8/);
    expect(tf.memory().numTensors).toBe(before);
  });

  it('draws image k of a request from seed + k, so each image can be made again alone', async () => {
    const many = await pipe.text2img({
      ...request,
      seed: 20,
      num_images_per_prompt: 2,
      scheduler: 'euler_a',
    });
    expect(many.seeds).toEqual([20, 21]);
    const alone = await pipe.text2img({ ...request, seed: 21, scheduler: 'euler_a' });
    const a = many.images[1].data;
    const b = alone.images[0].data;
    let worst = 0;
    for (let i = 0; i < a.length; i++) worst = Math.max(worst, Math.abs(a[i] - b[i]));
    // The same draws; only float rounding of a batch-2 forward pass may move a pixel by one level.
    expect(worst).toBeLessThanOrEqual(1);
    const image = { width: 16, height: 16, data: new Uint8Array(16 * 16 * 3).fill(90) };
    const edits = await pipe.img2img({
      ...request,
      image,
      seed: 30,
      num_images_per_prompt: 2,
      strength: 0.6,
    });
    const edit = await pipe.img2img({ ...request, image, seed: 31, strength: 0.6 });
    let worstEdit = 0;
    for (let i = 0; i < edit.images[0].data.length; i++)
      worstEdit = Math.max(worstEdit, Math.abs(edits.images[1].data[i] - edit.images[0].data[i]));
    expect(worstEdit).toBeLessThanOrEqual(1);
  });

  it('reports progress per step and returns latents on request', async () => {
    const seen: GenerationProgress[] = [];
    const out = await pipe.text2img({
      ...request,
      seed: 3,
      scheduler: 'ddim',
      onProgress: (p) => seen.push(p),
      return_latents: true,
    });
    expect(seen.map((p) => p.step)).toEqual([1, 2, 3]);
    expect(seen.map((p) => p.timestep)).toEqual(out.timesteps);
    expect(out.latents?.shape).toEqual([1, 4, 16, 16]);
  });

  it('img2img keeps the image size and rejects bad input', async () => {
    const image = { width: 16, height: 24, data: new Uint8Array(16 * 24 * 3).fill(200) };
    const out = await pipe.img2img({ ...request, seed: 1, image, strength: 0.5, num_inference_steps: 4 });
    expect(out.images[0]).toMatchObject({ width: 16, height: 24 });
    expect(out.timesteps).toHaveLength(3); // PNDM N+1 list from index 2
    await expect(
      pipe.img2img({ ...request, image: { width: 10, height: 8, data: new Uint8Array(240) } }),
    ).rejects.toThrow(/multiple of 8/);
    await expect(pipe.img2img({ ...request, image, strength: 1.5 })).rejects.toThrow(/strength/);
    await expect(
      pipe.img2img({ ...request, image, strength: 0.1, num_inference_steps: 3, scheduler: 'ddim' }),
    ).rejects.toThrow(/no denoising steps/);
  });

  it("refuses SDXL's request fields (one text encoder, no micro-conditioning) with InvalidArgument naming the field", async () => {
    const image = { width: 32, height: 32, data: new Uint8Array(32 * 32 * 3).fill(128) };
    await expect(pipe.text2img({ ...request, prompt_2: 'a dog' })).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
      message: expect.stringMatching(/^prompt_2: prompt_2 is an SDXL parameter/),
    });
    await expect(pipe.img2img({ ...request, image, original_size: [64, 64] })).rejects.toThrow(
      /original_size is an SDXL parameter/,
    );
  });

  it('exposes weights as a LoRA target (torch layout deltas, snapshot/restore)', () => {
    const t = pipe.loraTarget;
    const names = [...t.baseWeightNames()];
    expect(names).toContain('unet.down_blocks.1.attentions.0.proj_in.weight');
    expect(names).toContain('text_encoder.text_model.encoder.layers.0.self_attn.q_proj.weight');
    const conv = 'unet.down_blocks.1.attentions.0.proj_in.weight';
    expect(t.baseWeightShape(conv)).toEqual([64, 64, 1, 1]);
    expect(t.baseWeightShape('unet.nope.weight')).toBeUndefined();
    const lin = 'text_encoder.text_model.encoder.layers.0.mlp.fc1.weight';
    expect(t.baseWeightShape(lin)).toEqual([37, 32]);
    const before = tf.memory().numTensors;
    const snap = t.snapshotWeight?.(lin);
    // delta[r][c] = r·100 + c in torch layout: the stored value moves by exactly that × scale.
    const delta = tf.tensor2d(
      Float32Array.from({ length: 37 * 32 }, (_, i) => Math.floor(i / 32) * 100 + (i % 32)),
      [37, 32],
    );
    t.addDelta(lin, delta, 0.5);
    delta.dispose();
    const after = (pipe.textEncoder as ClipTextEncoder).weights.readTorch(
      'text_model.encoder.layers.0.mlp.fc1.weight',
    );
    const base = detWeight('text_model.encoder.layers.0.mlp.fc1.weight', [37, 32]);
    expect(after[3 * 32 + 5] - base[3 * 32 + 5]).toBeCloseTo(0.5 * 305, 3);
    const cdelta = tf.ones([64, 64, 1, 1]);
    t.addDelta(conv, cdelta, 2);
    cdelta.dispose();
    const convAfter = (pipe.unet as UNet2DConditionModel).weights.readTorch(
      'down_blocks.1.attentions.0.proj_in.weight',
    );
    expect(
      convAfter[7] - detWeight('down_blocks.1.attentions.0.proj_in.weight', [64, 64, 1, 1])[7],
    ).toBeCloseTo(2, 5);
    t.addDelta(
      conv,
      tf.tidy(() => tf.ones([64, 64, 1, 1])),
      -2,
    );
    if (snap) {
      t.restoreWeight?.(lin, snap);
      snap.dispose();
    }
    expect([
      ...(pipe.textEncoder as ClipTextEncoder).weights.readTorch(
        'text_model.encoder.layers.0.mlp.fc1.weight',
      ),
    ]).toEqual([...base]);
    expect(() => t.addDelta(lin, tf.zeros([32, 37]), 1)).toThrow(/shape \[32, 37\]/);
    expect(tf.memory().numTensors).toBeLessThanOrEqual(before + 2);
  });
});
