import { z } from 'zod';
import { SCHEDULER_NAMES } from '../schedulers/types.js';

/** Bounds that keep a request from exhausting memory or time: violations are a 400, not a crash. */
export interface GenerationLimits {
  /** Largest height/width in pixels (multiple of 8). Default 1024. */
  maxSize: number;
  /** Most denoising steps. Default 150. */
  maxSteps: number;
}

export const DEFAULT_LIMITS: GenerationLimits = { maxSize: 1024, maxSteps: 150 };

function commonFields(limits: GenerationLimits) {
  return {
    prompt: z.string().describe('What to draw'),
    negative_prompt: z.string().nullable().default(null).describe('What to steer away from'),
    num_inference_steps: z.int().min(1).max(limits.maxSteps).default(50),
    guidance_scale: z.number().min(0).max(50).default(7.5),
    eta: z.number().min(0).max(1).default(0).describe('DDIM η; other schedulers ignore it'),
    lora_weights: z
      .string()
      .nullable()
      .default(null)
      .describe('LoRA file inside the server LoRA directories, applied to this request only'),
    seed: z
      .int()
      .min(0)
      .max(2 ** 32 - 1)
      .nullable()
      .default(null)
      .describe('Random when absent'),
    scheduler: z
      .enum(SCHEDULER_NAMES as [string, ...string[]])
      .nullable()
      .default(null)
      .describe("Default: the model's"),
  };
}

function sizeField(limits: GenerationLimits, defaultSize: number) {
  return z.int().min(8).max(limits.maxSize).multipleOf(8).default(Math.min(defaultSize, limits.maxSize));
}

/** Body of `POST /text2img`; unknown fields are accepted (and ignored) like the reference service does. */
export function text2imgSchema(limits: GenerationLimits, defaultSize: number) {
  return z.looseObject({
    ...commonFields(limits),
    height: sizeField(limits, defaultSize),
    width: sizeField(limits, defaultSize),
  });
}

/** The `data` part of `POST /img2img`. */
export function img2imgSchema(limits: GenerationLimits) {
  return z.looseObject({
    ...commonFields(limits),
    strength: z.number().min(0).max(1).default(0.8).describe('How much of the image is re-drawn'),
  });
}

export type Text2ImgBody = z.infer<ReturnType<typeof text2imgSchema>>;
export type Img2ImgBody = z.infer<ReturnType<typeof img2imgSchema>>;

/** Body of `POST /progress`: follow one request, or every generation when absent. */
export const progressSchema = z.looseObject({ request_id: z.string().nullable().default(null) });
