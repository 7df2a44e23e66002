import type { StableDiffusionPipeline } from '@tiffin/diffusion';
import { caption, type SceneSpec } from '../dataset/attributes.js';
import { readScene } from './read-scene.js';
import { type Accuracy, AccuracyTally } from './score.js';

export interface EvaluationOptions {
  steps: number;
  guidance: number;
  /** Called after each picture (for progress lines). */
  onPicture?: (index: number, seconds: number) => void;
}

export interface EvaluationResult {
  accuracy: Accuracy;
  /** Seconds per picture, in order. */
  seconds: number[];
  count: number;
}

/** Generates one picture per scene through Tiffin's pipeline (seed = index) and scores what it reads back. */
export async function evaluatePipeline(
  pipe: StableDiffusionPipeline,
  scenes: readonly SceneSpec[],
  options: EvaluationOptions,
): Promise<EvaluationResult> {
  const tally = new AccuracyTally();
  const seconds: number[] = [];
  for (const [i, scene] of scenes.entries()) {
    const t0 = performance.now();
    const out = await pipe.text2img({
      prompt: caption(scene),
      num_inference_steps: options.steps,
      guidance_scale: options.guidance,
      seed: i,
    });
    seconds.push((performance.now() - t0) / 1000);
    options.onPicture?.(i, seconds[i]);
    tally.add(scene, readScene(out.images[0]));
  }
  return { accuracy: tally.accuracy(), seconds, count: tally.count };
}
