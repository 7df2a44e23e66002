import { samplerNameOf } from './compat/a1111/samplers.js';
import { infotext } from './infotext.js';
import type { ServedModel } from './model-hash.js';
import type { HiresUpscaler, JobInput, JobLora } from './worker-protocol.js';

/** The hires fix's upscalers by the names A1111 writes in `Hires upscaler`. */
const HIRES_UPSCALER_NAMES: Readonly<Record<HiresUpscaler, string>> = {
  latent: 'Latent',
  'latent-nearest': 'Latent (nearest)',
  lanczos: 'Lanczos',
};

/** What one native generation ran with: its job (LoRA defaults applied), its LoRAs, and the model. */
export interface GenerationRecord {
  input: JobInput;
  loras: readonly Pick<JobLora, 'name' | 'weight'>[];
  /** The scheduler a job without one ran (the checkpoint's own). */
  defaultScheduler: string | null;
  /** The checkpoint's name and hash; null when it could not be hashed. */
  model: ServedModel | null;
}

/** A LoRA as an A1111 prompt names it: `<lora:name:weight>`, the file's name without `.safetensors`. */
function loraTag(lora: Pick<JobLora, 'name' | 'weight'>): string {
  return `<lora:${lora.name.replace(/\.safetensors$/, '')}:${lora.weight}>`;
}

/**
 * The A1111 infotext of one image of a native generation (the `parameters` chunk of its PNG): the values the job
 * really ran with, the schedulers by A1111's sampler names, the LoRAs as `<lora:…>` tags after the prompt (so
 * pasting it into A1111, or into this service's A1111 routes, asks for the same LoRAs), and `Size` the first pass's
 * for a hires fix, as A1111 writes it.
 */
export function generationInfotext(
  { input, loras, defaultScheduler, model }: GenerationRecord,
  seed: number,
  width: number,
  height: number,
): string {
  const p = input.params;
  const prompt = [p.prompt ?? '', ...loras.map(loraTag)].filter((t) => t !== '').join(' ');
  const hires = input.hires;
  return infotext({
    prompt,
    negativePrompt: p.negative_prompt ?? '',
    steps: p.num_inference_steps,
    sampler: samplerNameOf(p.scheduler ?? defaultScheduler),
    scheduleType: p.use_karras_sigmas === true ? 'Karras' : null,
    cfgScale: p.guidance_scale,
    seed,
    width: hires ? input.width : width,
    height: hires ? input.height : height,
    modelHash: model?.hash?.short ?? null,
    model: model?.name ?? null,
    denoisingStrength: hires ? hires.strength : (input.strength ?? null),
    clipSkip: p.clip_skip > 0 ? p.clip_skip + 1 : null,
    hiresResize: hires ? `${hires.width}x${hires.height}` : null,
    hiresSteps: hires && hires.steps > 0 ? hires.steps : null,
    hiresUpscaler: hires ? HIRES_UPSCALER_NAMES[hires.upscaler] : null,
  });
}
