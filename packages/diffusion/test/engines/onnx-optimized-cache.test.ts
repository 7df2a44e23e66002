import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs';
import { loadOrt } from '@tiffin/onnx';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadOnnxComponents, type OnnxComponents } from '../../src/engines/onnx/load.js';
import { optimizedKey } from '../../src/engines/onnx/optimized-cache.js';
import { readLoraFile } from '../../src/lora/index.js';
import { StableDiffusionPipeline } from '../../src/pipeline/pipeline.js';
import { detInput } from '../../src/weights/deterministic.js';
import { maxAbsDiff } from '../helpers/fixtures.js';
import { fixtureNoise, tinyDir } from '../helpers/tiny.js';
import { writeReferenceKohya } from '../lora/reference-lora.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
beforeAll(async () => {
  await tf.setBackend('cpu');
});

const release = (c: OnnxComponents) => {
  c.textEncoder.dispose();
  c.unet.dispose();
  c.vae.dispose();
};

/** The optimized copies under each cached graph folder. */
const optimizedDirs = (cacheDir: string) =>
  readdirSync(cacheDir).flatMap((g) =>
    readdirSync(join(cacheDir, g))
      .filter((f) => f.startsWith('optimized-'))
      .map((f) => join(cacheDir, g, f)),
  );

async function unetOutput(c: OnnxComponents): Promise<Float32Array> {
  const sample = tf.tensor4d(detInput('opt/sample', [2, 8, 8, 4]), [2, 8, 8, 4]);
  const context = tf.tensor3d(detInput('opt/context', [2, 77, 32]), [2, 77, 32]);
  const out = await c.unet.predict(sample, 981, context);
  const data = out.dataSync() as Float32Array;
  tf.dispose([sample, context, out]);
  return data;
}

describe('saved optimized graphs (session start)', () => {
  it('the first start saves ORT-optimized graphs; the next opens them, with the same outputs', async () => {
    const dir = tinyDir('sd1');
    dirs.push(dir);
    const cacheDir = join(dir, '.graphs');
    const logs: string[] = [];
    const log = (m: string) => logs.push(m);
    const first = await loadOnnxComponents(dir, { cacheDir, log, intraOpThreads: 1 });
    expect(logs.filter((l) => / optimized and saved in \d+ ms$/.test(l))).toHaveLength(4);
    const saved = optimizedDirs(cacheDir);
    expect(saved).toHaveLength(4);
    for (const d of saved) expect(readdirSync(d).sort()).toEqual(['complete', 'model.onnx', 'weights.bin']);
    const reference = await unetOutput(first);
    release(first);

    logs.length = 0;
    const second = await loadOnnxComponents(dir, { cacheDir, log, intraOpThreads: 1 });
    expect(logs.filter((l) => / from its saved optimized form in \d+ ms$/.test(l))).toHaveLength(4);
    const again = await unetOutput(second);
    release(second);
    let worst = 0;
    for (let i = 0; i < again.length; i++) worst = Math.max(worst, Math.abs(again[i] - reference[i]));
    // The same optimized graph, now loaded instead of derived.
    expect(worst).toBeLessThanOrEqual(1e-6);

    // Without the cache nothing is saved or read.
    logs.length = 0;
    release(await loadOnnxComponents(dir, { cacheDir, log, optimizedCache: false, intraOpThreads: 1 }));
    expect(logs.filter((l) => / session .* optimized in \d+ ms$/.test(l))).toHaveLength(4);
    expect(optimizedDirs(cacheDir)).toEqual(saved);
  });

  it('per-request LoRA branches (graph inputs) work the same on the saved optimized graphs', async () => {
    const dir = tinyDir('sd1');
    dirs.push(dir);
    const cacheDir = join(dir, '.graphs');
    const lora = readLoraFile(
      writeReferenceKohya(join(mkdtempSync(join(dir, 'lora-')), 'reference.safetensors')),
    );
    const logs: string[] = [];
    const image = async () => {
      const pipe = await StableDiffusionPipeline.fromPretrained(dir, {
        backend: 'onnxruntime',
        onnx: { cacheDir, intraOpThreads: 1 },
        log: (m) => logs.push(m),
      });
      try {
        const { images } = await pipe.text2img({
          prompt: 'a red circle',
          height: 32,
          width: 32,
          num_inference_steps: 2,
          latents: detInput('opt/start', [1, 4, 16, 16]),
          noise: fixtureNoise(),
          return_float: true,
          lora: { file: lora, scale: 1, mode: 'unfused' },
        });
        return images[0].float as Float32Array;
      } finally {
        pipe.dispose();
      }
    };
    const saved = await image();
    const reopened = await image();
    expect(logs.filter((l) => / from its saved optimized form in /.test(l))).toHaveLength(4);
    expect(maxAbsDiff(reopened, saved)).toBeLessThanOrEqual(1e-6);
  }, 120_000);

  it('a damaged or incomplete optimized copy is optimized again, not used', async () => {
    const dir = tinyDir('sd1');
    dirs.push(dir);
    const cacheDir = join(dir, '.graphs');
    release(await loadOnnxComponents(dir, { cacheDir, log: () => {}, intraOpThreads: 1 }));
    const [damaged, incomplete] = optimizedDirs(cacheDir).sort();
    writeFileSync(join(damaged, 'model.onnx'), Buffer.from('not a protobuf \u00ff\u0000'));
    rmSync(join(incomplete, 'complete'));
    const logs: string[] = [];
    release(await loadOnnxComponents(dir, { cacheDir, log: (m) => logs.push(m), intraOpThreads: 1 }));
    expect(logs.filter((l) => / could not be opened, optimizing again: /.test(l))).toHaveLength(1);
    expect(logs.filter((l) => / optimized and saved in /.test(l))).toHaveLength(2);
    expect(logs.filter((l) => / from its saved optimized form in /.test(l))).toHaveLength(2);
    for (const d of optimizedDirs(cacheDir)) expect(existsSync(join(d, 'complete'))).toBe(true);
    expect(
      readdirSync(cacheDir)
        .flatMap((g) => readdirSync(join(cacheDir, g)))
        .some((f) => f.includes('.tmp-')),
    ).toBe(false);
  });

  it('the key follows the ORT version, the providers and the optimization choices, not the threads', async () => {
    const ort = await loadOrt();
    const cpu = { providers: ['cpu'], threads: 2, skipped: [] };
    const key = optimizedKey(ort, cpu);
    expect(optimizedKey(ort, { ...cpu, threads: 7 })).toBe(key);
    expect(optimizedKey(ort, { ...cpu, providers: ['cuda', 'cpu'] })).not.toBe(key);
    const otherOrt = { ...ort, env: { ...ort.env, versions: { ...ort.env.versions, common: '1.31.0' } } };
    expect(optimizedKey(otherOrt as typeof ort, cpu)).not.toBe(key);
  });
});
