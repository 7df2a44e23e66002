import { z } from 'zod';
import {
  type GenerationLimits,
  type GenerationParameters,
  img2imgParameters,
  type PipelineFamily,
  text2imgParameters,
} from '../pipeline/parameters.js';

export type { GenerationLimits } from '../pipeline/parameters.js';

/**
 * The service's bounds unless configured: 1024 px, 150 steps, 4 images, prompts of 10,000 characters, 4 LoRAs per
 * request.
 */
export const DEFAULT_GENERATION_LIMITS: GenerationLimits & { maxLoras: number } = {
  maxSize: 1024,
  maxSteps: 150,
  maxImages: 4,
  maxPromptLength: 10_000,
  maxLoras: 4,
};

/** One LoRA of a request with its weight (diffusers' adapter weight / A1111's `<lora:name:weight>`). */
const loraEntry = z.object({
  path: z.string().min(1).max(1024).describe('LoRA file inside the server LoRA directories'),
  weight: z.number().min(-10).max(10).default(1).describe('Scale of this LoRA (default 1)'),
});

/** `lora_weights`: one file name (weight 1), or a list of files with weights applied together. */
function loraField(maxLoras: number) {
  return z
    .union([z.string().min(1).max(1024), z.array(loraEntry).min(1).max(maxLoras)])
    .nullable()
    .default(null)
    .describe('LoRA file(s) inside the server LoRA directories, applied to this request only');
}

/**
 * Body of `POST /text2img`: the library's text2img parameters (one definition of names, bounds and
 * defaults) plus the service's `lora_weights`. Unknown fields are accepted (and ignored) like the
 * reference service does.
 */
export function text2imgSchema(
  limits: GenerationLimits & { maxLoras: number },
  defaultSize: number,
  family: PipelineFamily = 'sd',
) {
  return text2imgParameters(limits, defaultSize, family).extend({ lora_weights: loraField(limits.maxLoras) });
}

/** The `data` part of `POST /img2img`. */
export function img2imgSchema(
  limits: GenerationLimits & { maxLoras: number },
  family: PipelineFamily = 'sd',
) {
  return img2imgParameters(limits, family).extend({ lora_weights: loraField(limits.maxLoras) });
}

export type Text2ImgBody = z.infer<ReturnType<typeof text2imgSchema>>;
export type Img2ImgBody = z.infer<ReturnType<typeof img2imgSchema>>;

/** A request's LoRAs as a list, whatever form `lora_weights` took. */
export function requestLoras(value: Text2ImgBody['lora_weights']): Array<{ path: string; weight: number }> {
  if (value === null) return [];
  return typeof value === 'string' ? [{ path: value, weight: 1 }] : value;
}

/** The generation parameters of a validated body (without the service's own fields). */
export function generationParameters(body: Text2ImgBody | Img2ImgBody): GenerationParameters {
  return {
    prompt: body.prompt,
    negative_prompt: body.negative_prompt,
    num_inference_steps: body.num_inference_steps,
    guidance_scale: body.guidance_scale,
    eta: body.eta,
    seed: body.seed,
    scheduler: body.scheduler,
    num_images_per_prompt: body.num_images_per_prompt,
    guidance_rescale: body.guidance_rescale,
    clip_skip: body.clip_skip,
    prompt_2: body.prompt_2,
    negative_prompt_2: body.negative_prompt_2,
    original_size: body.original_size,
    crops_coords_top_left: body.crops_coords_top_left,
    target_size: body.target_size,
    negative_original_size: body.negative_original_size,
    negative_crops_coords_top_left: body.negative_crops_coords_top_left,
    negative_target_size: body.negative_target_size,
  };
}

/** Body of `POST /progress`: follow one request, or every generation when absent. */
export const progressSchema = z.looseObject({ request_id: z.string().nullable().default(null) });
