import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tinyAutoencoderConfig } from '../src/architectures/tiny-autoencoder.js';
import { selectBackend } from '../src/backend.js';
import { loadOnnxComponents } from '../src/engines/onnx/load.js';
import { NCHW_TO_NHWC, NHWC_TO_NCHW, transpose } from '../src/latents/host-tensor.js';
import { type EngineComponents, loadComponents } from '../src/pipeline/components.js';
import { tensorToImages } from '../src/pipeline/image.js';
import { tinyAutoencoderFolderConfig, writeTinyAutoencoder } from '../src/tiny/write-tiny-autoencoder.js';
import { writeTinyPipeline } from '../src/tiny/write-tiny-pipeline.js';
import { detInput } from '../src/weights/deterministic.js';
import { type Full, fixture, maxAbsDiff } from './helpers/fixtures.js';

interface TinyCase {
  latents: { name: string; shape: number[]; scale: number };
  decode_full: Full;
  image_uint8: number[];
}

// diffusers 0.27.2's AutoencoderTiny on the same folder and latents (reference/tiny_autoencoder_reference.py).
for (const engine of ['wasm', 'onnxruntime'] as const) {
  describe(`tiny autoencoder decode matches diffusers (${engine})`, () => {
    const fx = fixture('tiny_autoencoder.json') as { cases: TinyCase[] };
    let dir: string;
    let c: EngineComponents;
    beforeAll(async () => {
      await selectBackend(engine, () => {});
      dir = mkdtempSync(join(tmpdir(), 'tiny-taesd-'));
      writeTinyPipeline(join(dir, 'pipe'), { flavour: 'sd1' });
      const vaeTiny = writeTinyAutoencoder(join(dir, 'taesd'));
      c =
        engine === 'wasm'
          ? loadComponents(join(dir, 'pipe'), { vaeTiny })
          : await loadOnnxComponents(join(dir, 'pipe'), {
              cacheDir: join(dir, '.graphs'),
              vaeTiny,
              log: () => {},
            });
    }, 180_000);
    afterAll(() => {
      c?.textEncoder.dispose();
      c?.unet.dispose();
      c?.vae.dispose();
      c?.tinyDecoder?.dispose();
      rmSync(dir, { recursive: true, force: true });
    });

    for (const [k, name] of ['one image, values past the ±3 clamp', 'two images, 8×12'].entries())
      it(`${name}: floats within 1e-4, 8-bit images within one level`, async () => {
        const ref = fx.cases[k];
        const { shape, scale } = ref.latents;
        const z = transpose({ data: detInput(ref.latents.name, shape, scale), shape }, NCHW_TO_NHWC);
        const out = await c.tinyDecoder!.decodeOnHost(z);
        const nchw = transpose(out, NHWC_TO_NCHW);
        expect(nchw.shape).toEqual(ref.decode_full.shape);
        const err = maxAbsDiff(nchw.data, ref.decode_full.data);
        // The 8-bit images as the pipeline makes them (NHWC), against diffusers' (NCHW → NHWC).
        const refNhwc = transpose(
          { data: Float32Array.from(ref.image_uint8), shape: ref.decode_full.shape },
          NCHW_TO_NHWC,
        );
        const ours = tensorToImages(out).flatMap((p) => [...p.data]);
        const levels = maxAbsDiff(ours, refNhwc.data);
        console.info(
          `tiny autoencoder ${engine} case ${k}: max abs err ${err.toExponential(2)}, ${levels} levels`,
        );
        expect(err).toBeLessThan(1e-4);
        expect(levels).toBeLessThanOrEqual(1);
      });

    it('reports no unused tensors for a folder with the encoder left out', () => {
      expect(c.unexpectedWeights.vae_tiny ?? []).toEqual([]);
    });
  });
}

describe('tiny autoencoder folder checks', () => {
  it('takes TAESD defaults for missing fields', () => {
    const c = tinyAutoencoderConfig({ _class_name: 'AutoencoderTiny' }, 'config.json');
    expect(c.decoder_block_out_channels).toEqual([64, 64, 64, 64]);
    expect(c.num_decoder_blocks).toEqual([3, 3, 3, 1]);
    expect(c.scaling_factor).toBe(1);
  });

  for (const [what, patch] of [
    ['another class', { _class_name: 'AutoencoderKL' }],
    ['another activation', { act_fn: 'silu' }],
    ['mixed widths', { decoder_block_out_channels: [16, 8] }],
    ['mismatched lengths', { num_decoder_blocks: [1] }],
    ['a huge width', { decoder_block_out_channels: [1e9, 1e9] }],
    ['a non-integer block count', { num_decoder_blocks: [1.5, 1] }],
    ['upsampling by 3', { upsampling_scaling_factor: 3 }],
    ['a string scaling factor', { scaling_factor: '1' }],
  ] as const)
    it(`refuses ${what}`, () => {
      expect(() =>
        tinyAutoencoderConfig({ ...tinyAutoencoderFolderConfig(), ...patch }, 'config.json'),
      ).toThrow(/config\.json/);
    });

  it('refuses a folder whose upsampling is not the pipeline VAE scale factor (before reading weights)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tiny-taesd-bad-'));
    try {
      writeTinyPipeline(join(dir, 'pipe'), { flavour: 'sd1' });
      const vaeTiny = join(dir, 'taesd');
      writeTinyAutoencoder(vaeTiny, {
        ...tinyAutoencoderFolderConfig(),
        decoder_block_out_channels: [16, 16, 16],
        num_decoder_blocks: [1, 1, 1],
      });
      expect(() => loadComponents(join(dir, 'pipe'), { vaeTiny })).toThrow(/×4, the pipeline's VAE 4 ×2/);
      writeFileSync(join(vaeTiny, 'config.json'), '{not json');
      expect(() => loadComponents(join(dir, 'pipe'), { vaeTiny })).toThrow(/config\.json/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
