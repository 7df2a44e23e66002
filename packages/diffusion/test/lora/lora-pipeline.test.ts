import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs';
import { InvalidArgument, ServiceUnavailable } from '@tiffin/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClipTextEncoder } from '../../src/engines/tfjs/clip-text-encoder.js';
import { conv2d, linear } from '../../src/engines/tfjs/layers.js';
import { withLowRankBranches } from '../../src/engines/tfjs/low-rank.js';
import type { UNet2DConditionModel } from '../../src/engines/tfjs/unet.js';
import { type LoraFile, mergeLora, prepareRuntimeLora, readLoraFile } from '../../src/lora/index.js';
import { StableDiffusionPipeline } from '../../src/pipeline/pipeline.js';
import type { RequestLora, Text2ImgRequest } from '../../src/pipeline/types.js';
import { detInput } from '../../src/weights/deterministic.js';
import { compareSummary, fixture, maxAbsDiff, type Summary } from '../helpers/fixtures.js';
import { fixtureNoise, tinyDir } from '../helpers/tiny.js';
import { loraFixture, loraPairs, writeReferenceKohya } from './reference-lora.js';

/**
 * The image summaries of lora.json come from the tiny sd1 pipeline run with the request of
 * pipeline_sd1.json's `txt2img.default` (docs/spec/diffusion.md §13: its prompt and negative prompt, 32×32, 4 steps,
 * guidance 7.5, the folder's PNDM scheduler, latents det_input("pipe/latents"), injected noise):
 * `image_base` is that fixture's image. Tolerance: first/probe values within 1e-3,
 * mean/std/abs_sum within 1e-4 relative.
 */
const sd1 = fixture('pipeline_sd1.json');
const figures: string[] = [];

function request(lora?: RequestLora): Text2ImgRequest {
  return {
    prompt: sd1.prompt,
    negative_prompt: sd1.negative_prompt,
    height: 32,
    width: 32,
    num_inference_steps: 4,
    guidance_scale: 7.5,
    latents: detInput('pipe/latents', [1, 4, 16, 16]),
    noise: fixtureNoise(),
    return_float: true,
    lora,
  };
}

function expectSummary(label: string, image: Float32Array, ref: Summary): void {
  const c = compareSummary(image, ref);
  figures.push(
    `${label}: first/probe max abs ${c.maxAbs.toExponential(2)}, mean rel ${c.meanRel.toExponential(2)}, std rel ${c.stdRel.toExponential(2)}, abs_sum rel ${c.absSumRel.toExponential(2)}`,
  );
  expect(c.maxAbs).toBeLessThanOrEqual(1e-3);
  expect(c.meanRel).toBeLessThanOrEqual(1e-4);
  expect(c.stdRel).toBeLessThanOrEqual(1e-4);
  expect(c.absSumRel).toBeLessThanOrEqual(1e-4);
}

/** Copies of every LoRA-targetable base weight (tfjs layout) with the tensor that held it. */
function snapshotWeights(
  pipe: StableDiffusionPipeline,
): Map<string, { tensor: tf.Tensor; data: Float32Array }> {
  const out = new Map<string, { tensor: tf.Tensor; data: Float32Array }>();
  const stores = {
    unet: (pipe.unet as UNet2DConditionModel).weights,
    text_encoder: (pipe.textEncoder as ClipTextEncoder).weights,
  };
  for (const name of pipe.loraTarget.baseWeightNames()) {
    const dot = name.indexOf('.');
    const tensor = stores[name.slice(0, dot) as keyof typeof stores].get(name.slice(dot + 1));
    out.set(name, { tensor, data: (tensor.dataSync() as Float32Array).slice() });
  }
  return out;
}

/** Names of weights whose bits differ between two snapshots (toEqual on 2 M floats is slow). */
function changedWeights(
  before: Map<string, { data: Float32Array }>,
  after: Map<string, { data: Float32Array }>,
): string[] {
  const changed: string[] = [];
  for (const [name, w] of after) {
    const a = new Uint32Array(w.data.buffer, w.data.byteOffset, w.data.length);
    const old = before.get(name)?.data;
    const b = old && new Uint32Array(old.buffer, old.byteOffset, old.length);
    if (!b || a.length !== b.length || a.some((v, i) => v !== b[i])) changed.push(name);
  }
  return changed;
}

describe('reference LoRA on the tiny sd1 pipeline (lora.json images)', () => {
  let dir: string;
  let pipe: StableDiffusionPipeline;
  let file: LoraFile;
  let base: Float32Array;
  let fused08: Float32Array;
  let unfused1: Float32Array;
  const run = async (lora?: RequestLora) =>
    (await pipe.text2img(request(lora))).images[0].float as Float32Array;

  beforeAll(async () => {
    dir = tinyDir('sd1');
    pipe = await StableDiffusionPipeline.fromPretrained(dir, { backend: 'wasm', log: () => {} });
    file = readLoraFile(writeReferenceKohya(join(mkdtempSync(join(dir, 'lora-')), 'reference.safetensors')));
    base = await run();
  }, 180_000);
  afterAll(() => {
    pipe?.dispose();
    rmSync(dir, { recursive: true, force: true });
    console.info(`LoRA pipeline figures:\n${figures.join('\n')}`);
  });

  it('the request reproduces image_base without a LoRA', () => {
    expect(loraFixture.image_base.first).toEqual(sd1.txt2img.default.image.first);
    expectSummary('base', base, loraFixture.image_base);
  });

  it('fused at scale 0.8 matches image_fused_scale0.8, and the next request is the base image again', async () => {
    const before = snapshotWeights(pipe);
    // The bit comparison sees a merge (so "unchanged" below means something).
    const merged = mergeLora(pipe.loraTarget, file, { scale: loraFixture.scale });
    expect(changedWeights(before, snapshotWeights(pipe))).toHaveLength(loraPairs.length);
    merged.unmerge();
    fused08 = await run({ file, scale: loraFixture.scale, mode: 'fused' });
    expectSummary('fused scale 0.8', fused08, loraFixture['image_fused_scale0.8']);
    expect(changedWeights(before, snapshotWeights(pipe))).toEqual([]);
    expect(await run()).toEqual(base);
  });

  it('fused is the default mode', async () => {
    expect(await run({ file, scale: loraFixture.scale })).toEqual(fused08);
  });

  it('unfused at scale 1 matches image_lora_scale1_unfused_path and never writes a base weight', async () => {
    const before = snapshotWeights(pipe);
    const tensors = tf.memory().numTensors;
    unfused1 = await run({ file, scale: 1, mode: 'unfused' });
    expectSummary('unfused scale 1', unfused1, loraFixture.image_lora_scale1_unfused_path);
    const after = snapshotWeights(pipe);
    expect(after.size).toBe(340);
    expect([...after].filter(([name, w]) => w.tensor !== before.get(name)?.tensor)).toEqual([]);
    expect(changedWeights(before, after)).toEqual([]);
    expect(tf.memory().numTensors).toBe(tensors);
    expect(await run()).toEqual(base);
  });

  it('fused and unfused agree at the same scale', async () => {
    const fused1 = await run({ file, scale: 1, mode: 'fused' });
    expectSummary(
      'fused scale 1 vs the unfused reference',
      fused1,
      loraFixture.image_lora_scale1_unfused_path,
    );
    const unfused08 = await run({ file, scale: loraFixture.scale, mode: 'unfused' });
    const d1 = maxAbsDiff(fused1, unfused1);
    const d08 = maxAbsDiff(unfused08, fused08);
    figures.push(
      `fused vs unfused max abs image diff: scale 1 ${d1.toExponential(2)}, scale 0.8 ${d08.toExponential(2)}`,
    );
    expect(d1).toBeLessThanOrEqual(1e-5);
    expect(d08).toBeLessThanOrEqual(1e-5);
  });

  it('unfused requests run concurrently without seeing each other’s LoRA', async () => {
    const [withLora, without] = await Promise.all([run({ file, scale: 1, mode: 'unfused' }), run()]);
    expect(withLora).toEqual(unfused1);
    expect(without).toEqual(base);
  });

  it('a fused LoRA is refused while another generation runs, and blocks others while it runs', async () => {
    const before = snapshotWeights(pipe);
    const running = pipe.text2img({ ...request(), num_inference_steps: 1 });
    await expect(pipe.text2img(request({ file, mode: 'fused' }))).rejects.toThrow(ServiceUnavailable);
    await running;
    const fusedRun = pipe.text2img({ ...request({ file, mode: 'fused' }), num_inference_steps: 1 });
    await expect(pipe.text2img(request({ file, mode: 'unfused' }))).rejects.toThrow(/fused LoRA/);
    await fusedRun;
    expect(changedWeights(before, snapshotWeights(pipe))).toEqual([]);
  });

  it('rejects a bad mode and unmatched modules in both modes, leaving the weights as they were', async () => {
    const before = snapshotWeights(pipe);
    await expect(run({ file, mode: 'sideways' as 'fused' })).rejects.toThrow(InvalidArgument);
    const foreign: LoraFile = {
      ...file,
      modules: [...file.modules, { ...file.modules[0], key: 'lora_unet_down_blocks_7_attentions_0_proj_in' }],
    };
    for (const mode of ['fused', 'unfused'] as const)
      await expect(run({ file: foreign, mode })).rejects.toThrow(/1 of 121 modules unmatched/);
    const skipped = await run({ file: foreign, mode: 'unfused', scale: 1, onUnmatched: 'skip' });
    expect(skipped).toEqual(unfused1);
    expect(changedWeights(before, snapshotWeights(pipe))).toEqual([]);
  });

  it('a prepared run-time LoRA groups branches by component and frees them on dispose', () => {
    const tensors = tf.memory().numTensors;
    const runtime = prepareRuntimeLora(pipe.loraTarget, file, { scale: 0.5 });
    expect(tf.memory().numTensors).toBe(tensors + 2 * loraPairs.length);
    expect(new Set(runtime.weightNames)).toEqual(new Set(loraPairs.map((p) => p.weight)));
    expect(runtime.component('unet').size).toBe(108);
    expect(runtime.component('text_encoder').size).toBe(12);
    expect(runtime.component('text_encoder_2').size).toBe(0);
    runtime.dispose();
    runtime.dispose();
    expect(tf.memory().numTensors).toBe(tensors);
    expect(() => runtime.component('unet')).toThrow(/disposed/);
  });
});

describe('run-time low-rank branches equal merged weights', () => {
  beforeAll(async () => {
    await tf.setBackend('wasm');
  });

  /** A base weight plus one LoRA pair in torch layout, merged by `mergeLora` and prepared unfused. */
  function setup(shape: number[], kind: 'linear' | 'conv') {
    const r = 3;
    const out = shape[0];
    const torchW = detInput(`lr/${kind}/w`, shape, 0.3);
    const down = {
      shape: [r, ...shape.slice(1)],
      data: detInput(`lr/${kind}/down`, [r, ...shape.slice(1)], 0.2),
    };
    const up = {
      shape: kind === 'conv' ? [out, r, 1, 1] : [out, r],
      data: detInput(`lr/${kind}/up`, [out, r], 0.2),
    };
    const toTf = (t: tf.Tensor) => (kind === 'conv' ? t.transpose([2, 3, 1, 0]) : t.transpose([1, 0]));
    const base = tf.keep(toTf(tf.tensor(torchW, shape)));
    let merged: tf.Tensor | undefined;
    const target = {
      baseWeightNames: () => ['unet.layer.weight'],
      baseWeightShape: (n: string) => (n === 'unet.layer.weight' ? shape : undefined),
      addDelta: (_n: string, delta: tf.Tensor, scale: number) => {
        merged = tf.keep(tf.tidy(() => tf.add(base, tf.mul(toTf(delta), scale))));
      },
    };
    const file: LoraFile = {
      layout: 'kohya',
      metadata: {},
      modules: [{ key: 'lora_unet_layer', component: 'unet', down, up, alpha: 1.5 }],
    };
    const runtime = prepareRuntimeLora(target, file, { scale: 0.7 });
    const branches = new Map([[base, runtime.component('unet').get('layer.weight') ?? []]]);
    mergeLora(target, file, { scale: 0.7 });
    return { base, merged: merged as tf.Tensor, branches, runtime };
  }

  it('linear', () => {
    const { base, merged, branches, runtime } = setup([6, 5], 'linear');
    const x = tf.tensor(detInput('lr/x', [2, 7, 5]), [2, 7, 5]);
    const viaBranch = withLowRankBranches(branches, () => linear(x, base));
    const viaMerge = linear(x, merged);
    expect(maxAbsDiff(viaBranch.dataSync(), viaMerge.dataSync())).toBeLessThanOrEqual(1e-6);
    expect(maxAbsDiff(linear(x, base).dataSync(), viaMerge.dataSync())).toBeGreaterThan(1e-3);
    tf.dispose([x, viaBranch, viaMerge, base, merged]);
    runtime.dispose();
  });

  for (const [k, stride, pad] of [
    [3, 1, 'same-as-torch'],
    [1, 1, 'same-as-torch'],
    [3, 2, 'same-as-torch'],
    [3, 2, 'right-bottom'],
  ] as const) {
    it(`conv ${k}×${k} stride ${stride} ${pad}`, () => {
      const { base, merged, branches, runtime } = setup([6, 4, k, k], 'conv');
      const x = tf.tensor(detInput('lr/img', [1, 8, 8, 4]), [1, 8, 8, 4]);
      const viaBranch = withLowRankBranches(branches, () => conv2d(x, base, undefined, stride, pad));
      const viaMerge = conv2d(x, merged, undefined, stride, pad);
      expect(viaBranch.shape).toEqual(viaMerge.shape);
      // 36-term float32 sums: both orders round differently by a few ulps.
      expect(maxAbsDiff(viaBranch.dataSync(), viaMerge.dataSync())).toBeLessThanOrEqual(1e-5);
      tf.dispose([x, viaBranch, viaMerge, base, merged]);
      runtime.dispose();
    });
  }
});
