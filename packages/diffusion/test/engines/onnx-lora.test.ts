import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LoraFile, mergeLora, readLoraFile } from '../../src/lora/index.js';
import { StableDiffusionPipeline } from '../../src/pipeline/pipeline.js';
import type { RequestLora, Text2ImgRequest } from '../../src/pipeline/types.js';
import { detInput } from '../../src/weights/deterministic.js';
import { compareSummary, fixture, maxAbsDiff, type Summary } from '../helpers/fixtures.js';
import { fixtureNoise, tinyDir } from '../helpers/tiny.js';
import { loraFixture, writeReferenceKohya } from '../lora/reference-lora.js';

/**
 * lora.json on the onnxruntime engine, with the tolerances of the tfjs LoRA test (first/probe
 * values within 1e-3, moments within 1e-4 relative). A LoRA is fed as replacement weights of one
 * session (initializers that are also graph inputs), so switching never rebuilds a graph.
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

describe('reference LoRA on the tiny sd1 pipeline (onnxruntime)', () => {
  let dir: string;
  let cacheDir: string;
  let pipe: StableDiffusionPipeline;
  let file: LoraFile;
  let base: Float32Array;
  let fused08: Float32Array;
  let unfused1: Float32Array;
  const run = async (lora?: RequestLora) =>
    (await pipe.text2img(request(lora))).images[0].float as Float32Array;

  beforeAll(async () => {
    dir = tinyDir('sd1');
    cacheDir = join(dir, '.graphs');
    pipe = await StableDiffusionPipeline.fromPretrained(dir, {
      backend: 'onnxruntime',
      onnx: { cacheDir },
      log: () => {},
    });
    file = readLoraFile(writeReferenceKohya(join(mkdtempSync(join(dir, 'lora-')), 'reference.safetensors')));
    base = await run();
  }, 180_000);
  afterAll(() => {
    pipe?.dispose();
    rmSync(dir, { recursive: true, force: true });
    console.info(`onnxruntime LoRA figures:\n${figures.join('\n')}`);
  });

  it('the request reproduces image_base without a LoRA', () => {
    expectSummary('base', base, loraFixture.image_base);
  });

  it('fused at scale 0.8 matches image_fused_scale0.8; the next request is the base image again', async () => {
    const graphs = readdirSync(cacheDir).sort();
    fused08 = await run({ file, scale: loraFixture.scale, mode: 'fused' });
    expectSummary('fused scale 0.8', fused08, loraFixture['image_fused_scale0.8']);
    expect(await run()).toEqual(base);
    // No graph was built for the LoRA.
    expect(readdirSync(cacheDir).sort()).toEqual(graphs);
  });

  it('unfused at scale 1 matches image_lora_scale1_unfused_path; fused and unfused agree', async () => {
    unfused1 = await run({ file, scale: 1, mode: 'unfused' });
    expectSummary('unfused scale 1', unfused1, loraFixture.image_lora_scale1_unfused_path);
    expect(await run()).toEqual(base);
    const fused1 = await run({ file, scale: 1, mode: 'fused' });
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
    const [withLora, without, half] = await Promise.all([
      run({ file, scale: 1, mode: 'unfused' }),
      run(),
      run({ file, scale: loraFixture.scale, mode: 'unfused' }),
    ]);
    expect(withLora).toEqual(unfused1);
    expect(without).toEqual(base);
    expect(maxAbsDiff(half, fused08)).toBeLessThanOrEqual(1e-5);
  });

  it('a start-up LoRA merged into the target stays applied under request LoRAs and unmerges exactly', async () => {
    const merged = mergeLora(pipe.loraTarget, file, { scale: loraFixture.scale });
    expect(maxAbsDiff(await run(), fused08)).toBeLessThanOrEqual(1e-6);
    const stacked = await run({ file, scale: 0.2, mode: 'unfused' });
    expect(maxAbsDiff(stacked, unfused1)).toBeLessThanOrEqual(1e-5);
    expect(maxAbsDiff(await run(), fused08)).toBeLessThanOrEqual(1e-6);
    merged.unmerge();
    expect(await run()).toEqual(base);
  });
});
