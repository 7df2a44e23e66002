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
 * TF.js and onnxruntime, for the SD 1.x/2.x rows text2img and img2img with and without guidance within one 8-bit level, for the
 * SDXL rows (SSD-1B, Vega) text2img and img2img, with and without guidance, within one 8-bit level on both engines;
 * the SDXL refiner's UNet (five time ids, the last an aesthetic score) at the UNet level, its folder refused.
 */
interface PipelineCase {
  kind: 'text2img' | 'img2img';
  /** SDXL rows: the prompt whose encodings diffusers was given (pipeline_sdxl.json's, from transformers). */
  prompt?: string;
  scheduler: SchedulerName;
  config_overrides: Record<string, unknown>;
  steps: number;
  strength?: number | null;
  guidance_scale: number;
  timesteps: number[];
  image_uint8: number[];
}

interface FamilyCase {
  config: UNetConfig;
  requires_aesthetics_score: boolean;
  weights_match: { missing: string[]; unused: string[]; shape_mismatch: string[] };
  time_ids: number[][];
  unet: Record<string, Full>;
  pipelines?: Record<string, PipelineCase>;
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
      // Six time ids (SDXL base) or five (the refiner's, with an aesthetic score): the fixture's rows say.
      const ids = ref.time_ids[0].length;
      const pooled = (c.projection_class_embeddings_input_dim ?? 0) - ids * (c.addition_time_embed_dim ?? 0);
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
            [B, ids * Dt],
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

    if (ref.requires_aesthetics_score)
      it('as a folder (an SDXL refiner) is refused at start in one line, naming why', async () => {
        await expect(openTinyPipeline(dir, 'onnxruntime')).rejects.toThrow(
          /requires_aesthetics_score: SDXL refiner folders are not supported/,
        );
      });

    const pipelines = Object.entries(ref.pipelines ?? {});
    const sdxl = UNET_FAMILIES[family].flavour === 'sdxl';
    if (pipelines.length > 0)
      it(`${pipelines.map(([k]) => k).join(', ')} within one 8-bit level on both engines`, async () => {
        // SD 1.x/2.x: given embeddings; SDXL: the prompt diffusers was given the encodings of (its encoders').
        const embeds = (name: string) => ({
          shape: [1, 77, 32] as [number, number, number],
          data: detInput(name, [1, 77, 32]),
        });
        const init = Float32Array.from(detInput('pipe/init_image', [32 * 32 * 3], 0.25), (v) => v + 0.5);
        for (const engine of ['onnxruntime', 'wasm'] as const) {
          const pipe = await openTinyPipeline(dir, engine);
          try {
            expect(pipe.family).toBe(sdxl ? 'sdxl' : 'sd');
            for (const [key, p] of pipelines) {
              const guided = p.guidance_scale > 1;
              const prompt = sdxl
                ? { prompt: p.prompt as string }
                : {
                    prompt_embeds: embeds('pipe/prompt_embeds'),
                    ...(guided ? { negative_prompt_embeds: embeds('pipe/negative_prompt_embeds') } : {}),
                  };
              const common = {
                ...prompt,
                num_inference_steps: p.steps,
                guidance_scale: p.guidance_scale,
                scheduler: p.scheduler,
                scheduler_config: p.config_overrides,
                noise: fixtureNoise(),
              };
              const out =
                p.kind === 'img2img'
                  ? await pipe.img2img({
                      ...common,
                      image: { width: 32, height: 32, data: init },
                      strength: p.strength as number,
                    })
                  : await pipe.text2img({
                      ...common,
                      height: 32,
                      width: 32,
                      latents: detInput('pipe/latents', [1, 4, 16, 16]),
                    });
              expect(out.timesteps).toEqual(p.timesteps);
              const level = maxAbsDiff(out.images[0].data, p.image_uint8);
              console.info(`${family} ${key} ${engine}: max 8-bit level diff ${level}`);
              expect(level).toBeLessThanOrEqual(1);
            }
          } finally {
            pipe.dispose();
          }
        }
      }, 180_000);
  });
}
