import type { ModelDefaults, StableDiffusionPipeline } from '@tiffin/diffusion';
import { caption, type SceneSpec } from '../dataset/attributes.js';
import { readScene, type SceneReading } from './read-scene.js';
import { type Accuracy, AccuracyTally } from './score.js';

export interface EvaluationOptions {
  /** Steps, guidance and scheduler: the model folder's own defaults (`tiffin_defaults.json`) where left out. */
  steps?: number;
  guidance?: number;
  scheduler?: ModelDefaults['scheduler'];
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
  /** What was read back from each picture, in order (for a breakdown by the words asked for). */
  readings: SceneReading[];
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
  const readings: SceneReading[] = [];
  for (const [i, scene] of scenes.entries()) {
    const t0 = performance.now();
    const cpu0 = process.cpuUsage();
    const out = await pipe.text2img({
      prompt: (options.prompt ?? caption)(scene, i),
      ...(options.steps === undefined ? {} : { num_inference_steps: options.steps }),
      ...(options.guidance === undefined ? {} : { guidance_scale: options.guidance }),
      ...(options.scheduler === undefined ? {} : { scheduler: options.scheduler }),
      guidance_rescale: options.guidanceRescale ?? 0,
      seed: i,
    });
    seconds.push((performance.now() - t0) / 1000);
    const cpu = process.cpuUsage(cpu0);
    cpuSeconds.push((cpu.user + cpu.system) / 1e6);
    options.onPicture?.(i, seconds[i]);
    const reading = readScene(out.images[0]);
    readings.push(reading);
    tally.add(scene, reading);
  }
  return { accuracy: tally.accuracy(), seconds, cpuSeconds, readings, count: tally.count };
}
