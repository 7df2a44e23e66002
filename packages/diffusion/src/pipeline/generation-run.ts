import type { ComponentLora } from '../engines/engine-models.js';
import type { HostTensor } from '../latents/host-tensor.js';
import type { RuntimeLora } from '../lora/runtime.js';
import type { LoraComponent } from '../lora/types.js';
import type { Scheduler, SchedulerName } from '../schedulers/index.js';
import type { NoiseDraws } from './noise-draws.js';
import type { GenerationParameters } from './parameters.js';
import type { CommonRequest } from './types.js';

/** Where denoising starts: the first latents and the timesteps to run (a pipeline's `prepareLatents`). */
export interface DenoiseStart {
  /** NHWC. */
  latents: HostTensor;
  timesteps: number[];
  /** Steps reported in progress: num_inference_steps, or its strength share in img2img. */
  totalSteps: number;
  /** NHWC channels put beside the scaled latents of every UNet call (an inpainting UNet's mask and image). */
  unetExtra?: HostTensor;
  /** Applied to the latents after step `i` (inpainting's blending of the kept part). */
  afterStep?: (latents: HostTensor, i: number) => HostTensor;
}

/**
 * One generation's state as it passes through the pipeline seams (encode prompt → prepare latents →
 * denoise → decode): its validated parameters, scheduler, noise and LoRA branches, all released by `dispose()`
 * whatever happens. Its tensors are host arrays, left to the garbage collector.
 */
export class GenerationRun {
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

  /** The request's run-time LoRA for one component, if it has one. */
  loraFor(component: LoraComponent): ComponentLora | undefined {
    return this.lora && { runtime: this.lora, component };
  }

  /** Run `fn` when the run ends (last registered, first run): e.g. unmerge a fused LoRA. */
  atEnd(fn: () => void): void {
    this.cleanups.push(fn);
  }

  dispose(): void {
    for (const fn of this.cleanups.splice(0).reverse()) fn();
    this.scheduler.dispose();
    this.lora?.dispose();
  }
}
