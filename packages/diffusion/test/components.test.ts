import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { selectBackend } from '../src/backend.js';
import { loadOnnxComponents } from '../src/engines/onnx/load.js';
import { type EngineComponents, loadComponents } from '../src/pipeline/components.js';
import { writeTinyPipeline } from '../src/tiny/write-tiny-pipeline.js';
import { detInput } from '../src/weights/deterministic.js';
import { type Full, fixture, maxAbsDiff, nhwcToNchw, summaryError } from './helpers/fixtures.js';

const NCHW_TO_NHWC = [0, 2, 3, 1];

// The same checks on both engines: tfjs (wasm) and onnxruntime (graphs built from the folder).
for (const [flavour, engine] of [
  ['sd1', 'wasm'],
  ['sd2', 'wasm'],
  ['sd1', 'onnxruntime'],
  ['sd2', 'onnxruntime'],
] as const) {
  describe(`tiny ${flavour} components match diffusers (${engine})`, () => {
    const fx = fixture(`pipeline_${flavour}.json`);
    let dir: string;
    let c: EngineComponents;
    beforeAll(async () => {
      await selectBackend(engine, () => {});
      dir = mkdtempSync(join(tmpdir(), `tiny-${flavour}-`));
      writeTinyPipeline(dir, { flavour });
      c =
        engine === 'wasm'
          ? loadComponents(dir)
          : await loadOnnxComponents(dir, { cacheDir: join(dir, '.graphs'), log: () => {} });
    }, 180_000);
    afterAll(() => {
      c?.textEncoder.dispose();
      c?.unet.dispose();
      c?.vae.dispose();
      rmSync(dir, { recursive: true, force: true });
    });

    it('tokenizes the prompt as the reference', () => {
      expect(c.tokenizer.encode(fx.prompt)).toEqual(fx.token_ids);
    });

    it('text encoder', async () => {
      const out = (await c.textEncoder.encode([fx.token_ids])).lastHiddenState;
      const data = out.dataSync();
      out.dispose();
      const err = maxAbsDiff(data, (fx.text_encoder_full as Full).data);
      console.info(`${flavour} ${engine} text_encoder max abs err ${err.toExponential(2)}`);
      expect(err).toBeLessThan(1e-4);
    });

    for (const t of [981, 1]) {
      it(`unet at t=${t}`, async () => {
        const sample = tf.tidy(() =>
          tf.tensor4d(detInput('unet/sample', [2, 4, 16, 16]), [2, 4, 16, 16]).transpose(NCHW_TO_NHWC),
        ) as tf.Tensor4D;
        const ctx = tf.tensor3d(detInput('unet/encoder_hidden_states', [2, 77, 32]), [2, 77, 32]);
        const out = await c.unet.predict(sample, t, ctx);
        const data = nhwcToNchw(out.dataSync(), out.shape);
        tf.dispose([sample, ctx, out]);
        const err = maxAbsDiff(data, (fx[`unet_t${t}_full`] as Full).data);
        console.info(`${flavour} ${engine} unet t=${t} max abs err ${err.toExponential(2)}`);
        expect(err).toBeLessThan(1e-4);
      });
    }

    it('vae decode', async () => {
      const z = tf.tidy(() =>
        tf.tensor4d(detInput('vae/latents', [1, 4, 16, 16]), [1, 4, 16, 16]).transpose(NCHW_TO_NHWC),
      ) as tf.Tensor4D;
      const out = await c.vae.decode(z);
      const data = nhwcToNchw(out.dataSync(), out.shape);
      tf.dispose([z, out]);
      const err = maxAbsDiff(data, (fx.vae_decode_full as Full).data);
      console.info(`${flavour} ${engine} vae decode max abs err ${err.toExponential(2)}`);
      expect(err).toBeLessThan(1e-4);
    });

    it('vae encode mean and std', async () => {
      const x = tf.tidy(() =>
        tf.tensor4d(detInput('vae/image', [1, 3, 32, 32], 0.5), [1, 3, 32, 32]).transpose(NCHW_TO_NHWC),
      ) as tf.Tensor4D;
      const { mean, std } = await c.vae.encode(x);
      const m = nhwcToNchw(mean.dataSync(), mean.shape);
      const s = nhwcToNchw(std.dataSync(), std.shape);
      tf.dispose([x, mean, std]);
      const errM = maxAbsDiff(m, (fx.vae_encode_mean_full as Full).data);
      const errS = maxAbsDiff(s, (fx.vae_encode_std_full as Full).data);
      console.info(
        `${flavour} ${engine} vae encode max abs err mean ${errM.toExponential(2)} std ${errS.toExponential(2)}`,
      );
      expect(errM).toBeLessThan(1e-4);
      expect(errS).toBeLessThan(1e-4);
    });
  });
}

export { summaryError };
