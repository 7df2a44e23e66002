import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs';
import type { Tensor as OrtTensor } from 'onnxruntime-node';
import { describe, expect, it } from 'vitest';
import { type ClipTextConfig, clipTextWeightSpecs, eosPositions } from '../src/architectures/clip-text.js';
import { timeIdsEmbedding, timestepEmbedding } from '../src/architectures/timestep-embedding.js';
import { unetWeightSpecs } from '../src/architectures/unet.js';
import { contextWidth, type UNetConfig, validateUNetConfig } from '../src/architectures/unet-config.js';
import { type VaeConfig, vaeWeightSpecs } from '../src/architectures/vae.js';
import { buildSdxlTextEncoderGraph, SDXL_TEXT_ENCODER_IO } from '../src/engines/onnx/text-encoder-graph.js';
import { buildUNetGraph, UNET_INPUTS, UNET_OUTPUT } from '../src/engines/onnx/unet-graph.js';
import { ClipTextEncoder } from '../src/engines/tfjs/clip-text-encoder.js';
import { UNet2DConditionModel } from '../src/engines/tfjs/unet.js';
import { sdxlBaseUNetConfig } from '../src/tiny/sdxl-random.js';
import { sdxlTinyConfigs } from '../src/tiny/sdxl-tiny-configs.js';
import { detInput, detWeight } from '../src/weights/deterministic.js';
import { writeSafetensors } from '../src/weights/safetensors.js';
import { WeightStore } from '../src/weights/store.js';
import type { WeightSpec } from '../src/weights/weight-spec.js';
import { maxAbsDiff } from './helpers/fixtures.js';
import { type GraphBuild, networkSuite } from './helpers/graph-session.js';

const params = (specs: readonly WeightSpec[]) =>
  specs.reduce((n, s) => n + s.shape.reduce((a, b) => a * b, 1), 0);

const SDXL_BASE_UNET: UNetConfig = sdxlBaseUNetConfig();

describe('SDXL declarations', () => {
  it('declare the SDXL base UNet with its parameter count (2,567,463,684, as diffusers counts it)', () => {
    expect(params(unetWeightSpecs(SDXL_BASE_UNET))).toBe(2_567_463_684);
    const names = new Set(unetWeightSpecs(SDXL_BASE_UNET).map((s) => s.name));
    expect(names.has('add_embedding.linear_1.weight')).toBe(true);
    expect(names.has('down_blocks.2.attentions.1.transformer_blocks.9.attn2.to_k.weight')).toBe(true);
    expect([...names].some((n) => n.startsWith('down_blocks.0.attentions.'))).toBe(false);
  });

  it('declare its two text encoders with their parameter counts (CLIP ViT-L 123,060,480; ViT-bigG with projection 694,659,840)', () => {
    const clip = { vocab_size: 49408, max_position_embeddings: 77, layer_norm_eps: 1e-5 };
    const vitL: ClipTextConfig = {
      ...clip,
      hidden_size: 768,
      intermediate_size: 3072,
      num_hidden_layers: 12,
      num_attention_heads: 12,
      hidden_act: 'quick_gelu',
    };
    const bigG: ClipTextConfig = {
      ...clip,
      hidden_size: 1280,
      intermediate_size: 5120,
      num_hidden_layers: 32,
      num_attention_heads: 20,
      hidden_act: 'gelu',
      projection_dim: 1280,
    };
    expect(params(clipTextWeightSpecs(vitL))).toBe(123_060_480);
    expect(params(clipTextWeightSpecs(bigG, true))).toBe(694_659_840);
    expect(clipTextWeightSpecs(bigG, true).at(-1)).toEqual({
      name: 'text_projection.weight',
      shape: [1280, 1280],
      kind: 'linear',
    });
  });

  it("declare SDXL's VAE (the SD AutoencoderKL, scaling 0.13025) with its parameter count (83,653,863)", () => {
    const vae: VaeConfig = {
      in_channels: 3,
      out_channels: 3,
      block_out_channels: [128, 256, 512, 512],
      layers_per_block: 2,
      latent_channels: 4,
      norm_num_groups: 32,
      scaling_factor: 0.13025,
    };
    expect(params(vaeWeightSpecs(vae))).toBe(83_653_863);
  });

  it('the SD pipeline still rejects a text_time UNet; the architecture accepts it where its caller feeds it', () => {
    expect(() => validateUNetConfig(SDXL_BASE_UNET)).toThrow(
      /addition_embed_type = "text_time" is not supported/,
    );
    expect(() => validateUNetConfig(SDXL_BASE_UNET, { textTime: true })).not.toThrow();
    const { addition_time_embed_dim: _, ...incomplete } = SDXL_BASE_UNET;
    expect(() => validateUNetConfig(incomplete as UNetConfig, { textTime: true })).toThrow(
      /addition_time_embed_dim/,
    );
  });

  it('pick the pooled position as transformers does (first EOS, or the highest id for eos_token_id 2)', () => {
    const c = sdxlTinyConfigs().textEncoder;
    expect(eosPositions(c, [[998, 5, 999, 999, 0]])).toEqual([2]);
    expect(eosPositions({ ...c, eos_token_id: 2 }, [[998, 5, 999, 0, 0]])).toEqual([2]);
  });
});

/**
 * The one definition run on both backends with the same random SDXL-shaped weights. No diffusers reference
 * numbers: diffusers/torch are not installed where this was written, so this proves the two backends agree and
 * the added conditioning is wired, not fidelity to diffusers.
 */
describe('a small random SDXL-shaped model on TF.js and on onnxruntime', () => {
  const cfg = sdxlTinyConfigs();
  const dir = mkdtempSync(join(tmpdir(), 'tiny-sdxl-'));

  const store = (component: string, specs: WeightSpec[]) => {
    const s = new WeightStore(component, specs);
    for (const spec of specs)
      s.setTorch(spec.name, spec.shape, detWeight(`${component}/${spec.name}`, spec.shape));
    writeSafetensors(
      join(dir, `${component}.safetensors`),
      Object.fromEntries(
        specs.map((spec) => [
          spec.name,
          { shape: spec.shape, data: detWeight(`${component}/${spec.name}`, spec.shape) },
        ]),
      ),
    );
    return s;
  };
  const suite = networkSuite(dir, join(dir, 'graphs'));
  const session = (component: string, specs: WeightSpec[], build: GraphBuild) => {
    expect(specs.some((s) => s.kind !== 'plain')).toBe(true);
    return suite.open(component, [join(dir, `${component}.safetensors`)], build);
  };

  const ids = [
    [998, 17, 250, 999, 999, ...Array(72).fill(999)],
    [998, 3, 4, 5, 6, 999, ...Array(71).fill(999)],
  ];
  const int64 = (rows: readonly (readonly number[])[]) =>
    new (suite.ort().Tensor)('int64', BigInt64Array.from(rows.flat().map(BigInt)), [
      rows.length,
      rows[0].length,
    ]);

  for (const [name, second] of [
    ['text_encoder', false],
    ['text_encoder_2', true],
  ] as const) {
    it(`${name}: penultimate hidden state${second ? ' and projected text embeds' : ''} agree`, async () => {
      const ort = suite.ort();
      const c: ClipTextConfig = second ? cfg.textEncoder2 : cfg.textEncoder;
      const specs = clipTextWeightSpecs(c, second);
      const encoder = new ClipTextEncoder(c, store(name, specs));
      const s = await session(name, specs, (g) => buildSdxlTextEncoderGraph(g, c, { kind: 'fused' }, second));
      const io = SDXL_TEXT_ENCODER_IO;
      const feeds: Record<string, OrtTensor> = { [io.ids]: int64(ids) };
      if (second) {
        const positions = eosPositions(c, ids);
        expect(positions).toEqual([3, 5]);
        feeds[io.eosPositions] = new ort.Tensor('int64', BigInt64Array.from(positions.map(BigInt)), [
          ids.length,
        ]);
      }
      const out = await s.run(feeds);
      const tfOut = encoder.encodeForSdxl(ids);
      expect(tfOut.penultimate.shape).toEqual([2, 77, c.hidden_size]);
      const err = maxAbsDiff(tfOut.penultimate.dataSync(), out[io.penultimate].data as Float32Array);
      expect(err).toBeLessThan(1e-4);
      if (second) {
        expect(tfOut.textEmbeds?.shape).toEqual([2, c.projection_dim]);
        const errE = maxAbsDiff(
          (tfOut.textEmbeds as tf.Tensor).dataSync(),
          out[io.textEmbeds].data as Float32Array,
        );
        expect(errE).toBeLessThan(1e-4);
      } else expect(tfOut.textEmbeds).toBeUndefined();
      tf.dispose([tfOut.penultimate, tfOut.textEmbeds as tf.Tensor]);
      encoder.dispose();
    });
  }

  it('UNet with the added text/time embedding agrees; the time ids change the prediction', async () => {
    const ort = suite.ort();
    const c = cfg.unet;
    const specs = unetWeightSpecs(c);
    const unet = new UNet2DConditionModel(c, store('unet', specs));
    const s = await session('unet', specs, (g) => buildUNetGraph(g, c, { kind: 'fused' }));
    const sample = tf.tensor4d(detInput('sdxl/sample', [2, 16, 16, 4]), [2, 16, 16, 4]);
    const D = contextWidth(c);
    const E = cfg.textEncoder2.projection_dim as number;
    const context = tf.tensor3d(detInput('sdxl/context', [2, 77, D]), [2, 77, D]);
    const textEmbeds = tf.tensor2d(detInput('sdxl/text-embeds', [2, E]), [2, E]);
    const timeIds = [
      [1024, 1024, 0, 0, 1024, 1024],
      [768, 1024, 16, 0, 1024, 1024],
    ];
    const t = 501;
    const expected = unet.predict(sample, t, context, undefined, { textEmbeds, timeIds });
    const out = await s.run({
      [UNET_INPUTS.sample]: new ort.Tensor('float32', sample.dataSync() as Float32Array, sample.shape),
      [UNET_INPUTS.timeProj]: new ort.Tensor('float32', timestepEmbedding(t, 32, true, 0), [1, 32]),
      [UNET_INPUTS.context]: new ort.Tensor('float32', context.dataSync() as Float32Array, context.shape),
      [UNET_INPUTS.textEmbeds]: new ort.Tensor(
        'float32',
        textEmbeds.dataSync() as Float32Array,
        textEmbeds.shape,
      ),
      [UNET_INPUTS.timeIds]: new ort.Tensor('float32', timeIdsEmbedding(timeIds, 8, true, 0), [2, 48]),
    });
    const err = maxAbsDiff(expected.dataSync(), out[UNET_OUTPUT].data as Float32Array);
    console.info(`tiny SDXL UNet TF.js vs onnxruntime max abs err ${err.toExponential(2)}`);
    expect(err).toBeLessThan(1e-4);
    // Micro-conditioning is wired: other time ids, another prediction.
    const other = unet.predict(sample, t, context, undefined, {
      textEmbeds,
      timeIds: [timeIds[1], timeIds[0]],
    });
    expect(maxAbsDiff(expected.dataSync(), other.dataSync())).toBeGreaterThan(1e-3);
    expect(() => unet.predict(sample, t, context)).toThrow(/needs text embeds and time ids/);
    tf.dispose([sample, context, textEmbeds, expected, other]);
    unet.dispose();
  }, 60_000);
});
