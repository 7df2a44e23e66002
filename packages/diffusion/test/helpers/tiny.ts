import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import type { FromPretrainedOptions } from '../../src/pipeline/pipeline.js';
import { StableDiffusionPipeline } from '../../src/pipeline/pipeline.js';
import type { InjectedNoise, RequestLora, Text2ImgRequest } from '../../src/pipeline/types.js';
import type { TinyFlavour } from '../../src/tiny/tiny-configs.js';
import { writeTinyPipeline } from '../../src/tiny/write-tiny-pipeline.js';
import { detInput } from '../../src/weights/deterministic.js';

/** Open a tiny pipeline folder on a backend, its onnxruntime graphs cached inside the folder, quietly. */
export function openTinyPipeline(
  dir: string,
  backend: NonNullable<FromPretrainedOptions['backend']>,
): Promise<StableDiffusionPipeline> {
  return StableDiffusionPipeline.fromPretrained(dir, {
    backend,
    onnx: { cacheDir: join(dir, '.graphs') },
    log: () => {},
  });
}

/** The two engines a tiny pipeline is compared on. */
export type TinyEngine = 'onnxruntime' | 'wasm';

/**
 * For the calling describe block: a fresh tiny folder of `flavour` opened on onnxruntime and on TF.js (wasm) before
 * its tests, disposed and deleted after them.
 */
export function tinyOnBothEngines(flavour: TinyFlavour): {
  pipes: Record<TinyEngine, StableDiffusionPipeline>;
  dir: () => string;
} {
  let dir = '';
  const pipes = {} as Record<TinyEngine, StableDiffusionPipeline>;
  beforeAll(async () => {
    dir = tinyDir(flavour);
    for (const engine of ['onnxruntime', 'wasm'] as const)
      pipes[engine] = await openTinyPipeline(dir, engine);
  }, 180_000);
  afterAll(() => {
    for (const p of Object.values(pipes)) p.dispose();
    rmSync(dir, { recursive: true, force: true });
  });
  return { pipes, dir: () => dir };
}

/** Write a tiny pipeline into a fresh temp dir. */
export function tinyDir(flavour: TinyFlavour): string {
  return writeTinyPipeline(mkdtempSync(join(tmpdir(), `tiny-${flavour}-`)), { flavour });
}

/** The harness's injected noise: `pipe-noise/<k>`, `vae-noise/<k>`, `sched-noise/<k>`, counters per call. */
export function fixtureNoise(): InjectedNoise {
  const counters = { latents: 0, vae: 0, scheduler: 0 };
  const prefix = { latents: 'pipe-noise', vae: 'vae-noise', scheduler: 'sched-noise' };
  return (purpose, shape) => detInput(`${prefix[purpose]}/${counters[purpose]++}`, shape);
}

/**
 * One 32×32, 3-step text2img of a tiny pipeline on onnxruntime with fixed latents and noise (`start` names the
 * latents), as float pixels in [0, 1]: for comparing engine options image to image.
 */
export async function tinyOnnxImage(
  dir: string,
  onnx: FromPretrainedOptions['onnx'],
  start: string,
  lora?: RequestLora,
): Promise<Float32Array> {
  const pipe = await StableDiffusionPipeline.fromPretrained(dir, {
    backend: 'onnxruntime',
    onnx,
    log: () => {},
  });
  try {
    const { images } = await pipe.text2img({
      prompt: 'a red circle',
      height: 32,
      width: 32,
      num_inference_steps: 3,
      guidance_scale: 7.5,
      latents: detInput(start, [1, 4, 16, 16]),
      noise: fixtureNoise(),
      return_float: true,
      lora,
    });
    return images[0].float as Float32Array;
  } finally {
    pipe.dispose();
  }
}

/** A reference pipeline case's scheduler and guidance (fewstep.json, more_schedulers.json → `pipelines`). */
export interface SchedulerPipelineCase {
  scheduler: Text2ImgRequest['scheduler'];
  config_overrides: Record<string, unknown>;
  steps: number;
  guidance_scale: number;
}

/**
 * The text2img request of a reference pipeline case on the tiny SD 1.x folder: given prompt embeddings (and negative
 * ones with guidance), 32 × 32, latents `pipe/latents` and the fixtures' noise draws.
 */
export function referenceCaseRequest(c: SchedulerPipelineCase): Text2ImgRequest {
  const embeds = (name: string) => ({
    shape: [1, 77, 32] as [number, number, number],
    data: detInput(name, [1, 77, 32]),
  });
  return {
    prompt_embeds: embeds('pipe/prompt_embeds'),
    ...(c.guidance_scale > 1 ? { negative_prompt_embeds: embeds('pipe/negative_prompt_embeds') } : {}),
    height: 32,
    width: 32,
    num_inference_steps: c.steps,
    guidance_scale: c.guidance_scale,
    scheduler: c.scheduler,
    scheduler_config: c.config_overrides,
    latents: detInput('pipe/latents', [1, 4, 16, 16]),
    noise: fixtureNoise(),
  };
}
