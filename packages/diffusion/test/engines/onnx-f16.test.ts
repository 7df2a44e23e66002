import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadOnnxComponents, type OnnxComponents } from '../../src/engines/onnx/load.js';
import { readLoraFile } from '../../src/lora/index.js';
import type { RequestLora } from '../../src/pipeline/types.js';
import { detInput } from '../../src/weights/deterministic.js';
import { maxAbsDiff, maxRelativeDiff } from '../helpers/fixtures.js';
import { tinyDir, tinyOnnxImage } from '../helpers/tiny.js';
import { writeReferenceKohya } from '../lora/reference-lora.js';

/**
 * f16 graphs (what `auto` builds for the cuda/tensorrt/dml providers) checked on the CPU provider, the only one
 * here: ORT runs them by casting around the nodes it has no f16 kernel for, so this proves the graphs are valid
 * and compute the same model at f16 precision; GPU speed and memory are not measured here.
 */
const dir = tinyDir('sd1');
const cacheDir = join(dir, '.graphs');
const loaded: Record<'f32' | 'f16', OnnxComponents | undefined> = { f32: undefined, f16: undefined };
const logs: string[] = [];

beforeAll(async () => {
  await tf.setBackend('cpu');
  for (const precision of ['f32', 'f16'] as const)
    loaded[precision] = await loadOnnxComponents(dir, {
      cacheDir,
      precision,
      intraOpThreads: 1,
      log: (m) => logs.push(m),
    });
}, 120_000);
afterAll(() => {
  for (const c of Object.values(loaded)) {
    c?.textEncoder.dispose();
    c?.unet.dispose();
    c?.vae.dispose();
  }
  rmSync(dir, { recursive: true, force: true });
});

/** Max abs difference relative to the f32 output's largest magnitude. */
const relative = (f32: tf.Tensor, f16: tf.Tensor): number => maxRelativeDiff(f32.dataSync(), f16.dataSync());

const both = <T>(run: (c: OnnxComponents) => Promise<T>) =>
  Promise.all([run(loaded.f32 as OnnxComponents), run(loaded.f16 as OnnxComponents)]);

describe('f16 graphs', () => {
  it('are built as f16 (half the weight bytes) and cached apart from the f32 ones', () => {
    expect(logs.filter((l) => / f16 graph built in /.test(l))).toHaveLength(4);
    expect(logs.filter((l) => / f32 graph built in /.test(l))).toHaveLength(4);
    const weights = (prefix: string) =>
      readdirSync(cacheDir)
        .filter((d) => d.startsWith(prefix))
        .map((d) => statSync(join(cacheDir, d, 'weights.bin')).size)
        .sort((a, b) => a - b);
    // Two UNet graphs: the smaller weights file is the f16 one; page alignment of each tensor keeps the tiny
    // model's ratio above 1/2.
    const [f16, f32] = weights('unet-');
    expect(f16 / f32).toBeLessThan(0.75);
  });

  it('text encoder, UNet and VAE agree with the f32 graphs at f16 precision', async () => {
    const ids = [Array.from({ length: 77 }, (_, i) => (i * 7) % 1000)];
    const [te32, te16] = await both((c) => c.textEncoder.encode(ids));
    const sample = tf.tensor4d(detInput('f16/sample', [2, 8, 8, 4]), [2, 8, 8, 4]);
    const context = tf.tensor3d(detInput('f16/context', [2, 77, 32]), [2, 77, 32]);
    const [u32, u16] = await both((c) => c.unet.predict(sample, 981, context));
    const z = tf.tensor4d(detInput('f16/latents', [1, 8, 8, 4]), [1, 8, 8, 4]);
    const [d32, d16] = await both((c) => c.vae.decode(z));
    const errors = {
      text: relative(te32.lastHiddenState, te16.lastHiddenState),
      unet: relative(u32, u16),
      vae: relative(d32, d16),
    };
    // Measured on the tiny pipeline: text 1.5e-3, UNet 1.4e-3, VAE 1.1e-3 (f16 keeps 11 significant bits).
    expect(errors.text).toBeLessThan(5e-3);
    expect(errors.unet).toBeLessThan(5e-3);
    expect(errors.vae).toBeLessThan(5e-3);
    tf.dispose([te32.lastHiddenState, te16.lastHiddenState, sample, context, u32, u16, z, d32, d16]);
  });

  it('a text2img with a per-request LoRA (f32 branch inputs cast to f16) matches the f32 pipeline', async () => {
    const lora = readLoraFile(
      writeReferenceKohya(join(mkdtempSync(join(dir, 'lora-')), 'reference.safetensors')),
    );
    const image = (precision: 'f32' | 'f16', request?: RequestLora) =>
      tinyOnnxImage(dir, { cacheDir, precision, intraOpThreads: 1 }, 'f16/start', request);
    const request: RequestLora = { file: lora, scale: 1, mode: 'unfused' };
    const [base32, base16, lora32, lora16] = [
      await image('f32'),
      await image('f16'),
      await image('f32', request),
      await image('f16', request),
    ];
    // The LoRA changes the image far more than f16 rounding does (images in [0, 1]). Measured: LoRA effect 0.12,
    // f16 vs f32 2.4e-3 without and 2.5e-3 with the LoRA.
    const loraEffect = maxAbsDiff(lora32, base32);
    expect(maxAbsDiff(base16, base32)).toBeLessThan(loraEffect / 10);
    expect(maxAbsDiff(lora16, lora32)).toBeLessThan(loraEffect / 10);
    expect(maxAbsDiff(lora16, lora32)).toBeLessThan(1e-2);
  }, 180_000);
});
