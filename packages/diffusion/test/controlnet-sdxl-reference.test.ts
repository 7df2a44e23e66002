import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ControlNetEngine } from '../src/engines/engine-models.js';
import { mul } from '../src/latents/float32-math.js';
import { NCHW_TO_NHWC, transpose } from '../src/latents/host-tensor.js';
import { StableDiffusionPipeline } from '../src/pipeline/pipeline.js';
import { writeTinyControlNet } from '../src/tiny/write-tiny-controlnet.js';
import { writeTinyPipeline } from '../src/tiny/write-tiny-pipeline.js';
import { detInput, detUniform } from '../src/weights/deterministic.js';
import { type Full, fixture, maxRelativeDiff } from './helpers/fixtures.js';
import type { TinyEngine } from './helpers/tiny.js';

/**
 * An SDXL ControlNet (`addition_embed_type` `text_time`, the tiny SDXL UNet's encoder half) loaded beside the tiny
 * SDXL pipeline, against diffusers 0.27.2's `ControlNetModel` with `added_cond_kwargs` (`controlnet_sdxl.json`, written
 * by reference/sdxl_controlnet_reference.py): its residuals at conditioning scale 0.5 for given inputs, on both engines.
 */
const fx = fixture('controlnet_sdxl.json') as {
  timestep: number;
  time_ids: number[];
  residuals: { conditioning_scale: number; down: Full[]; mid: Full };
};

let root = '';
const nets = {} as Record<TinyEngine, ControlNetEngine>;
const pipes: StableDiffusionPipeline[] = [];

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'tiny-controlnet-sdxl-'));
  const sdxl = writeTinyPipeline(join(root, 'sdxl'), { flavour: 'sdxl' });
  const a = writeTinyControlNet(join(root, 'a'), { flavour: 'sdxl', seed: 'a' });
  for (const backend of ['onnxruntime', 'wasm'] as const) {
    const pipe = await StableDiffusionPipeline.fromPretrained(sdxl, {
      backend,
      controlnets: { a },
      onnx: { cacheDir: join(root, '.graphs') },
      log: () => {},
    });
    pipes.push(pipe);
    // The pipeline's own loaded net (a private field, reached by name in the test).
    const net = (pipe as unknown as { controlnets: ReadonlyMap<string, ControlNetEngine> }).controlnets.get(
      'a',
    );
    if (!net) throw new Error('net a not loaded');
    nets[backend] = net;
  }
}, 240_000);

afterAll(() => {
  for (const p of pipes) p.dispose();
  rmSync(root, { recursive: true, force: true });
});

/** The reference script's `picture`: uint8 floor((u + 1) · 127.5) of det_uniform(name), HWC RGB, / 255. */
function conditioning(name: string, width: number, height: number) {
  const u = detUniform(name, width * height * 3);
  const data = new Float32Array(u.length);
  for (let i = 0; i < u.length; i++)
    data[i] = Math.fround(Math.min(255, Math.max(0, Math.floor((u[i] + 1) * 127.5))) / 255);
  return { data, shape: [1, height, width, 3] };
}

describe('an SDXL ControlNet matches diffusers', () => {
  for (const engine of ['onnxruntime', 'wasm'] as const)
    it(`gives diffusers' residuals with text_time conditioning on ${engine}`, async () => {
      const net = nets[engine];
      const context = net.config.cross_attention_dim as number;
      const pooled =
        (net.config.projection_class_embeddings_input_dim as number) -
        6 * (net.config.addition_time_embed_dim as number);
      const r = await net.residualsOnHost(
        transpose({ data: detInput('cnxl/sample', [1, 4, 16, 16]), shape: [1, 4, 16, 16] }, NCHW_TO_NHWC),
        fx.timestep,
        { data: detInput('cnxl/context', [1, 77, context]), shape: [1, 77, context] },
        conditioning('control/a', 32, 32),
        {
          textEmbeds: { data: detInput('cnxl/text_embeds', [1, pooled]), shape: [1, pooled] },
          timeIds: [fx.time_ids],
        },
      );
      const ref = [...fx.residuals.down, fx.residuals.mid];
      const got = [...r.down, r.mid].map((x) => mul(x, fx.residuals.conditioning_scale));
      expect(got).toHaveLength(ref.length);
      ref.forEach((want, k) => {
        const nhwc = transpose({ data: Float32Array.from(want.data), shape: want.shape }, NCHW_TO_NHWC);
        expect(got[k].shape).toEqual(nhwc.shape);
        const err = maxRelativeDiff(nhwc.data, got[k].data);
        console.info(`residual ${k} ${engine}: max relative diff ${err.toExponential(2)}`);
        expect(err).toBeLessThan(1e-4);
      });
    });
});
