import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { timeIdsEmbedding, timestepEmbedding } from '../src/architectures/timestep-embedding.js';
import { unetWeightSpecs } from '../src/architectures/unet.js';
import { contextWidth, hasTextTimeEmbedding, type UNetConfig } from '../src/architectures/unet-config.js';
import { buildUNetGraph, UNET_INPUTS, UNET_OUTPUT } from '../src/engines/onnx/unet-graph.js';
import { UNet2DConditionModel } from '../src/engines/tfjs/unet.js';
import { UNET_FAMILIES, type UNetFamilyName } from '../src/families/unet-families.js';
import type { SchedulerName } from '../src/schedulers/registry.js';
import { writeTinyPipeline } from '../src/tiny/write-tiny-pipeline.js';
import { detInput } from '../src/weights/deterministic.js';
import { loadWeightsInto } from '../src/weights/folder.js';
import { WeightStore } from '../src/weights/store.js';
import {
  type Full,
  fixture,
  maxAbsDiff,
  maxRelativeDiff,
  nchwToNhwc,
  nhwcToNchw,
} from './helpers/fixtures.js';
import { networkSuite } from './helpers/graph-session.js';
import { fixtureNoise, openTinyPipeline } from './helpers/tiny.js';

/**
 * UNets shaped like distilled and pruned families (src/families/unet-families.ts: BK-SDM small/tiny, SDXS, SSD-1B,
 * Segmind Vega, and every remaining per-block field at once) against diffusers 0.27.2 (`unet_configs.json`, written
 * by reference/unet_configs_reference.py from the folders writeTinyPipeline writes): the UNet at two timesteps on
 * TF.js and onnxruntime, for the SD 1.x/2.x rows text2img with and without guidance within one 8-bit level, and for the
 * SDXL rows the folder loading as an SDXL pipeline on both engines.
 */
interface FamilyCase {
  config: UNetConfig;
  weights_match: { missing: string[]; unused: string[]; shape_mismatch: string[] };
  time_ids: number[][];
  unet: Record<string, Full>;
  pipelines?: Record<
    string,
    {
      scheduler: SchedulerName;
      config_overrides: Record<string, unknown>;
      steps: number;
      guidance_scale: number;
      timesteps: number[];
      image_uint8: number[];
    }
  >;
}

const fx = fixture('unet_configs.json');
// Float32 agreement between two implementations of the same maths (docs/spec/diffusion.md §13).
const BOUND = 1e-5;
const [B, CH, H, W] = fx.inputs.sample_shape as number[];
const NHWC: [number, number, number, number] = [B, H, W, CH];

for (const family of Object.keys(UNET_FAMILIES) as UNetFamilyName[]) {
  const ref = fx.families[family] as FamilyCase;
  describe(`${family} (${UNET_FAMILIES[family].models}) matches diffusers`, () => {
    const dir = writeTinyPipeline(mkdtempSync(join(tmpdir(), `unet-${family}-`)), { unetFamily: family });
    const suite = networkSuite(dir, join(dir, '.graphs'));
    const file = join(dir, 'unet', 'diffusion_pytorch_model.safetensors');
    const c = JSON.parse(readFileSync(join(dir, 'unet', 'config.json'), 'utf8')) as UNetConfig;

    it('is the folder diffusers was given, and diffusers builds exactly its weights', () => {
      expect(c).toEqual(ref.config);
      expect(ref.weights_match).toEqual({ missing: [], unused: [], shape_mismatch: [] });
    });

    it('UNet at t = 981 and t = 1 on TF.js and onnxruntime', async () => {
      const ort = suite.ort();
      const sample = nchwToNhwc(detInput('unet-family/sample', [B, CH, H, W]), [B, CH, H, W]);
      const ctxShape: [number, number, number] = [B, 77, contextWidth(c)];
      const context = detInput('unet-family/context', ctxShape);
      const textTime = hasTextTimeEmbedding(c);
      const pooled = (c.projection_class_embeddings_input_dim ?? 0) - 6 * (c.addition_time_embed_dim ?? 0);
      const textEmbeds = detInput('unet-family/text_embeds', [B, pooled]);
      const store = new WeightStore('unet', unetWeightSpecs(c));
      expect(loadWeightsInto(store, [file]).unexpected).toEqual([]);
      const unet = new UNet2DConditionModel(c, store);
      const s = await suite.open('unet', [file], (g) => buildUNetGraph(g, c, { kind: 'fused' }));
      const C0 = c.block_out_channels[0];
      for (const t of fx.inputs.timesteps as number[]) {
        const want = ref.unet[`t${t}`];
        const [x, ctx, emb] = [
          tf.tensor4d(sample, NHWC),
          tf.tensor3d(context, ctxShape),
          tf.tensor2d(textEmbeds, [B, pooled]),
        ];
        const y = unet.predict(
          x,
          t,
          ctx,
          undefined,
          textTime ? { textEmbeds: emb, timeIds: ref.time_ids } : undefined,
        );
        const tfErr = maxRelativeDiff(want.data, nhwcToNchw(y.dataSync(), NHWC));
        tf.dispose([x, ctx, emb, y]);
        const feeds: Record<string, InstanceType<typeof ort.Tensor>> = {
          [UNET_INPUTS.sample]: new ort.Tensor('float32', sample, NHWC),
          [UNET_INPUTS.timeProj]: new ort.Tensor('float32', timestepEmbedding(t, C0, true, 0), [1, C0]),
          [UNET_INPUTS.context]: new ort.Tensor('float32', context, ctxShape),
        };
        if (textTime) {
          const Dt = c.addition_time_embed_dim as number;
          feeds[UNET_INPUTS.textEmbeds] = new ort.Tensor('float32', textEmbeds, [B, pooled]);
          feeds[UNET_INPUTS.timeIds] = new ort.Tensor(
            'float32',
            timeIdsEmbedding(ref.time_ids, Dt, true, 0),
            [B, 6 * Dt],
          );
        }
        const out = await s.run(feeds);
        const ortErr = maxRelativeDiff(want.data, nhwcToNchw(out[UNET_OUTPUT].data as Float32Array, NHWC));
        console.info(
          `${family} UNet t=${t} vs diffusers, max abs err / max |ref|: TF.js ${tfErr.toExponential(2)}, onnxruntime ${ortErr.toExponential(2)}`,
        );
        expect(tfErr).toBeLessThan(BOUND);
        expect(ortErr).toBeLessThan(BOUND);
      }
      unet.dispose();
    }, 120_000);

    // No diffusers reference here (its SDXL pipeline needs transformers): the folder loads as SDXL on both engines,
    // which agree as the tiny SDXL pipeline's do.
    if (UNET_FAMILIES[family].flavour === 'sdxl')
      it('loads as an SDXL pipeline; text2img on both engines agrees', async () => {
        const images: Float32Array[] = [];
        for (const engine of ['onnxruntime', 'wasm'] as const) {
          const pipe = await openTinyPipeline(dir, engine);
          try {
            expect(pipe.family).toBe('sdxl');
            const out = await pipe.text2img({
              prompt: 'a red circle',
              num_inference_steps: 2,
              latents: detInput('pipe/latents', [1, 4, 16, 16]),
              noise: fixtureNoise(),
              return_float: true,
            });
            images.push(out.images[0].float as Float32Array);
          } finally {
            pipe.dispose();
          }
        }
        const err = maxAbsDiff(images[0], images[1]);
        console.info(`${family} SDXL text2img onnxruntime vs TF.js max abs err ${err.toExponential(2)}`);
        expect(err).toBeLessThan(1e-3);
      }, 120_000);

    const pipelines = Object.entries(ref.pipelines ?? {});
    if (pipelines.length > 0)
      it(`text2img (${pipelines.map(([k]) => k).join(', ')}) within one 8-bit level on both engines`, async () => {
        const embeds = (name: string) => ({
          shape: [1, 77, 32] as [number, number, number],
          data: detInput(name, [1, 77, 32]),
        });
        for (const engine of ['onnxruntime', 'wasm'] as const) {
          const pipe = await openTinyPipeline(dir, engine);
          try {
            for (const [key, p] of pipelines) {
              const guided = p.guidance_scale > 1;
              const out = await pipe.text2img({
                prompt_embeds: embeds('pipe/prompt_embeds'),
                ...(guided ? { negative_prompt_embeds: embeds('pipe/negative_prompt_embeds') } : {}),
                height: 32,
                width: 32,
                num_inference_steps: p.steps,
                guidance_scale: p.guidance_scale,
                scheduler: p.scheduler,
                scheduler_config: p.config_overrides,
                latents: detInput('pipe/latents', [1, 4, 16, 16]),
                noise: fixtureNoise(),
              });
              expect(out.timesteps).toEqual(p.timesteps);
              const level = maxAbsDiff(out.images[0].data, p.image_uint8);
              console.info(`${family} text2img ${key} ${engine}: max 8-bit level diff ${level}`);
              expect(level).toBeLessThanOrEqual(1);
            }
          } finally {
            pipe.dispose();
          }
        }
      }, 120_000);
  });
}
