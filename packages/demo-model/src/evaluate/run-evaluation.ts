import type { StableDiffusionPipeline } from '@tiffin/diffusion';
import { caption, type SceneSpec } from '../dataset/attributes.js';
import { readScene } from './read-scene.js';
import { type Accuracy, AccuracyTally } from './score.js';

export interface EvaluationOptions {
  steps: number;
  guidance: number;
  /** guidance_rescale (0: plain classifier-free guidance). */
  guidanceRescale?: number;
  /** The prompt of scene `index` (default: its training-style caption). */
  prompt?: (scene: SceneSpec, index: number) => string;
  /** Called after each picture (for progress lines). */
  onPicture?: (index: number, seconds: number) => void;
}

export interface EvaluationResult {
  accuracy: Accuracy;
  /** Wall-clock seconds per picture, in order. */
  seconds: number[];
  /** CPU seconds (all threads of this process) per picture: the figure a shared, busy machine distorts least. */
  cpuSeconds: number[];
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
  const cpuSeconds: number[] = [];
  for (const [i, scene] of scenes.entries()) {
    const t0 = performance.now();
    const cpu0 = process.cpuUsage();
    const out = await pipe.text2img({
      prompt: (options.prompt ?? caption)(scene, i),
      num_inference_steps: options.steps,
      guidance_scale: options.guidance,
      guidance_rescale: options.guidanceRescale ?? 0,
      seed: i,
    });
    seconds.push((performance.now() - t0) / 1000);
    const cpu = process.cpuUsage(cpu0);
    cpuSeconds.push((cpu.user + cpu.system) / 1e6);
    options.onPicture?.(i, seconds[i]);
    tally.add(scene, readScene(out.images[0]));
  }
  return { accuracy: tally.accuracy(), seconds, cpuSeconds, count: tally.count };
}
