import { readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs';
import { ConfigError } from '@tiffin/core/internal';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadOnnxComponents, type OnnxComponents } from '../../src/engines/onnx/load.js';
import { type OnnxWeights, parseOnnxWeights } from '../../src/engines/onnx/weight-format.js';
import { detInput } from '../../src/weights/deterministic.js';
import { float32ToHalf, halfToFloat } from '../../src/weights/dtype.js';
import { dequantizeInt8, quantizeInt8 } from '../../src/weights/int8.js';
import { maxRelativeDiff } from '../helpers/fixtures.js';
import { tinyDir, tinyOnnxImage } from '../helpers/tiny.js';

/**
 * The ONNX engine's weight storage (`weights: f16 | int8`) on the tiny pipeline, against its f32 graphs: the built
 * graphs are smaller, int8 graphs use ORT's integer kernels, and the outputs stay within what the stored precision
 * allows.
 */
const dir = tinyDir('sd1');
const cacheDir = join(dir, '.graphs');
const formats = ['f32', 'f16', 'int8'] as const;
const loaded = new Map<OnnxWeights, OnnxComponents>();

beforeAll(async () => {
  await tf.setBackend('cpu');
  for (const weights of formats)
    loaded.set(
      weights,
      await loadOnnxComponents(dir, {
        cacheDir,
        weights,
        precision: 'f32',
        intraOpThreads: 1,
        log: () => {},
      }),
    );
}, 180_000);
afterAll(() => {
  for (const c of loaded.values()) {
    c.textEncoder.dispose();
    c.unet.dispose();
    c.vae.dispose();
  }
  rmSync(dir, { recursive: true, force: true });
});

/** The UNet graph folders in the cache, by weights.bin size (f32 largest). */
function unetGraphs(): { dir: string; bytes: number; model: string }[] {
  return readdirSync(cacheDir)
    .filter((d) => d.startsWith('unet-') && !d.includes('.tmp'))
    .map((d) => ({
      dir: d,
      bytes: statSync(join(cacheDir, d, 'weights.bin')).size,
      model: readFileSync(join(cacheDir, d, 'model.onnx')).toString('latin1'),
    }))
    .sort((a, b) => a.bytes - b.bytes);
}

const count = (text: string, word: string) => text.split(word).length - 1;

const relative = maxRelativeDiff;

describe('weight formats of the ONNX engine', () => {
  it('quantizes per output channel within half a step of its scale', () => {
    const k = 48;
    const n = 5;
    const w = detInput('int8/w', [k, n]);
    w[3 * n + 2] = 40; // one outlier only coarsens its own column
    const q = quantizeInt8(w, k, n, 1);
    const back = dequantizeInt8(q, k, n, 1);
    for (let c = 0; c < n; c++) {
      let max = 0;
      for (let r = 0; r < k; r++) max = Math.max(max, Math.abs(w[r * n + c]));
      expect(q.scales[c]).toBeCloseTo(max / 127, 6);
      for (let r = 0; r < k; r++)
        expect(Math.abs(back[r * n + c] - w[r * n + c])).toBeLessThanOrEqual(q.scales[c] / 2 + 1e-7);
    }
    expect(q.scales[0]).toBeLessThan(q.scales[2] / 10);
    // An all-zero channel gets scale 1 and zeros, not NaN.
    const zeros = quantizeInt8(new Float32Array(6), 1, 2, 3);
    expect([...zeros.scales]).toEqual([1, 1]);
    expect([...zeros.values]).toEqual([0, 0, 0, 0, 0, 0]);
  });

  it('f16 storage round-trips every float32 within f16 precision', () => {
    const x = detInput('f16/roundtrip', [4096]);
    x[0] = 1e-6; // subnormal in f16
    x[1] = 65504; // largest f16
    const half = float32ToHalf(x);
    for (let i = 0; i < x.length; i++) {
      const back = halfToFloat(half[i]);
      // Round to nearest: half an f16 ulp (2^-11 relative) for normals, 2^-25 absolute for subnormals.
      expect(Math.abs(back - x[i])).toBeLessThanOrEqual(Math.max(Math.abs(x[i]) * 2 ** -11, 2 ** -25));
    }
  });

  it('builds smaller graphs: f16 about half the f32 bytes, int8 with integer kernels about a quarter', () => {
    const graphs = unetGraphs();
    expect(graphs).toHaveLength(3);
    const [int8, f16, f32] = graphs;
    expect(count(int8.model, 'DynamicQuantizeMatMul')).toBeGreaterThan(10);
    expect(count(int8.model, 'MatMulIntegerToFloat')).toBeGreaterThan(10);
    expect(count(f32.model, 'DynamicQuantizeMatMul') + count(f32.model, 'MatMulIntegerToFloat')).toBe(0);
    expect(count(f16.model, 'DynamicQuantizeMatMul')).toBe(0);
    // Each tensor is page aligned in the file, which keeps the tiny model's ratios above 1/2 and 1/4.
    expect(f16.bytes / f32.bytes).toBeLessThan(0.65);
    expect(int8.bytes / f32.bytes).toBeLessThan(0.45);
  });

  it('f16 storage computes the f32 graphs at f16 weight precision; int8 within its quantization error', async () => {
    const ids = [Array.from({ length: 77 }, (_, i) => (i * 7) % 1000)];
    const sample = tf.tensor4d(detInput('w/sample', [2, 8, 8, 4]), [2, 8, 8, 4]);
    const context = tf.tensor3d(detInput('w/context', [2, 77, 32]), [2, 77, 32]);
    const out: Record<string, { text: Float32Array; unet: Float32Array; vae: Float32Array }> = {};
    const z = tf.tensor4d(detInput('w/latents', [1, 8, 8, 4]), [1, 8, 8, 4]);
    for (const weights of formats) {
      const c = loaded.get(weights) as OnnxComponents;
      const te = await c.textEncoder.encode(ids);
      const u = await c.unet.predict(sample, 981, context);
      const d = await c.vae.decode(z);
      out[weights] = {
        text: te.lastHiddenState.dataSync() as Float32Array,
        unet: u.dataSync() as Float32Array,
        vae: d.dataSync() as Float32Array,
      };
      tf.dispose([te.lastHiddenState, u, d]);
    }
    tf.dispose([sample, context, z]);
    const f16 = {
      text: relative(out.f32.text, out.f16.text),
      unet: relative(out.f32.unet, out.f16.unet),
      vae: relative(out.f32.vae, out.f16.vae),
    };
    const int8 = { text: relative(out.f32.text, out.int8.text), unet: relative(out.f32.unet, out.int8.unet) };
    // f16 storage rounds weights only (activations stay f32): below the f16 graphs' bound (onnx-f16.test.ts).
    expect(f16.text).toBeLessThan(5e-3);
    expect(f16.unet).toBeLessThan(5e-3);
    expect(f16.vae).toBeLessThan(5e-3);
    // int8: each quantized layer adds a relative error of at most 1/254 (weights, per channel: half a step of
    // max|w|/127) plus half a step of the activation's range over 255 (uint8 per tensor), ≈ 4× the activation's RMS
    // here: ≈ 0.4 % + 0.8 % = 1.2 % per layer. About 25 quantized layers lie on the tiny UNet's longest path (8 on
    // the text encoder's); independent errors add as √25 · 1.2 % = 6 %. Bound: 8 %. Measured: text 3.5 %, UNet 4.4 %.
    expect(int8.text).toBeLessThan(0.08);
    expect(int8.unet).toBeLessThan(0.08);
    // The VAE keeps f32 weights under `int8`.
    expect(relative(out.f32.vae, out.int8.vae)).toBe(0);
    console.info(`relative error vs f32: f16 ${JSON.stringify(f16)}, int8 ${JSON.stringify(int8)}`);
  });

  it('an int8 text2img stays close to the f32 one (PSNR)', async () => {
    const image = (weights: OnnxWeights) =>
      tinyOnnxImage(dir, { cacheDir, weights, precision: 'f32', intraOpThreads: 1 }, 'w/start');
    const f32 = await image('f32');
    const int8 = await image('int8');
    let se = 0;
    for (let i = 0; i < f32.length; i++) se += (f32[i] - int8[i]) ** 2;
    const psnr = 10 * Math.log10(1 / (se / f32.length));
    console.info(`tiny pipeline int8 vs f32 PSNR ${psnr.toFixed(1)} dB`);
    // Images in [0, 1]; 30 dB is an average error of about 3 % of the range.
    expect(psnr).toBeGreaterThan(30);
  }, 120_000);

  it('leaves f16 graphs (what GPU providers get) as they are, saying so', async () => {
    const logs: string[] = [];
    const c = await loadOnnxComponents(dir, {
      cacheDir,
      weights: 'int8',
      precision: 'f16',
      intraOpThreads: 1,
      log: (m) => logs.push(m),
    });
    c.textEncoder.dispose();
    c.unet.dispose();
    c.vae.dispose();
    expect(logs.join('\n')).toMatch(
      /int8 weights apply to f32 graphs \(CPU provider\); the cpu provider gets f16 graphs/,
    );
    expect(logs.filter((l) => / unet f16 graph built in /.test(l))).toHaveLength(1);
    expect(logs.some((l) => /int8 weights graph/.test(l))).toBe(false);
  }, 120_000);

  it('refuses an unknown weight format with the accepted ones', async () => {
    expect(parseOnnxWeights('INT8')).toBe('int8');
    expect(() => parseOnnxWeights('int4')).toThrow(ConfigError);
    expect(() => parseOnnxWeights('int4')).toThrow('expected f32, f16, int8');
    expect(() => parseOnnxWeights('', '--weights')).toThrow('--weights: unknown weight format ""');
    // From JavaScript, before anything is built.
    await expect(
      loadOnnxComponents(dir, { cacheDir, weights: 'int4' as OnnxWeights, log: () => {} }),
    ).rejects.toThrow('onnx.weights: unknown weight format "int4": expected f32, f16, int8');
  });
});
