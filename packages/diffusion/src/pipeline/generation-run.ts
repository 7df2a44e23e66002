import type * as tf from '@tensorflow/tfjs';
import type { RuntimeLora } from '../lora/runtime.js';
import type { Scheduler, SchedulerName } from '../schedulers/index.js';
import type { NoiseDraws } from './noise-draws.js';
import type { GenerationParameters } from './parameters.js';
import type { CommonRequest } from './types.js';

/** Where denoising starts: the first latents and the timesteps to run (a pipeline's `prepareLatents`). */
export interface DenoiseStart {
  latents: tf.Tensor4D;
  timesteps: number[];
  /** Steps reported in progress: num_inference_steps, or its strength share in img2img. */
  totalSteps: number;
}

/**
 * One generation's state as it passes through the pipeline seams (encode prompt → prepare latents →
 * denoise → decode): its validated parameters, scheduler, noise and LoRA branches, and the tensors it
 * owns, all released by `dispose()` whatever happens.
 */
export class GenerationRun {
  private readonly owned = new Set<tf.Tensor>();
  private readonly cleanups: Array<() => void> = [];

  constructor(
    readonly params: GenerationParameters & { height: number; width: number },
    readonly scheduler: Scheduler,
    readonly schedulerName: SchedulerName,
    readonly seed: number,
    readonly noise: NoiseDraws,
    /** The request's LoRA branches for the unfused path. */
    readonly lora: RuntimeLora | undefined,
    /** The caller's request: embeddings, progress callback, cancel signal, output options. */
    readonly request: CommonRequest,
  ) {}

  /** With classifier-free guidance, every UNet call is a batch of [negative, positive]. */
  get guided(): boolean {
    return this.params.guidance_scale > 1;
  }

  /** Images generated per prompt (the latent batch). */
  get batch(): number {
    return this.params.num_images_per_prompt;
  }

  /** Keep `t` until the run ends (or it is `replace`d). */
  own<T extends tf.Tensor>(t: T): T {
    this.owned.add(t);
    return t;
  }

  /** Dispose `old` now and own `next` instead (the latents of each step). */
  replace<T extends tf.Tensor>(old: tf.Tensor, next: T): T {
    this.owned.delete(old);
    old.dispose();
    return this.own(next);
  }

  /** Run `fn` when the run ends (last registered, first run): e.g. unmerge a fused LoRA. */
  atEnd(fn: () => void): void {
    this.cleanups.push(fn);
  }

  dispose(): void {
    for (const fn of this.cleanups.splice(0).reverse()) fn();
    for (const t of this.owned) t.dispose();
    this.owned.clear();
    this.scheduler.dispose();
    this.lora?.dispose();
  }
}
