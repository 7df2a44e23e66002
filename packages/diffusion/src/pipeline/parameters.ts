import { InvalidArgument } from '@tiffin/core';
import { z } from 'zod';
import { SCHEDULER_NAMES, type SchedulerName } from '../schedulers/registry.js';

/**
 * The one definition of generation parameters: names, bounds and defaults, for the library
 * (`text2img`/`img2img` validate their request with it) and for the HTTP API (its request schemas extend
 * these, so OpenAPI shows the same rules). A request is validated once, where it enters.
 */

/** Bounds that keep a request from exhausting memory or time: violations are a 400, not a crash. */
export interface GenerationLimits {
  /** Largest height/width in pixels (multiple of 8). Service default 1024. */
  maxSize: number;
  /** Most denoising steps. Service default 150. */
  maxSteps: number;
  /** Most images per request (`num_images_per_prompt`). Service default 4. */
  maxImages: number;
  /**
   * Longest `prompt` / `negative_prompt` in characters. CLIP reads only the first 75 tokens, but the tokenizer
   * goes through the whole text first (about 0.7 s per MB, in the worker that generates). Service default 10,000.
   */
  maxPromptLength: number;
}

/** The library's bounds: only what the model itself needs. */
export const NO_LIMITS: GenerationLimits = {
  maxSize: Number.POSITIVE_INFINITY,
  maxSteps: Number.POSITIVE_INFINITY,
  maxImages: Number.POSITIVE_INFINITY,
  maxPromptLength: Number.POSITIVE_INFINITY,
};

/** The default number of denoising steps (diffusers'), lowered to the limit when that is smaller. */
const DEFAULT_STEPS = 50;

/** Which pipeline family's defaults apply: SD 1.x/2.x or SDXL (docs/spec/diffusion.md §8, §10). */
export type PipelineFamily = 'sd' | 'sdxl';

/** diffusers' defaults per family: SDXL's pipelines guide at 5.0 and re-draw 30 % of an image by default. */
export const FAMILY_DEFAULTS: Readonly<Record<PipelineFamily, { guidance_scale: number; strength: number }>> =
  {
    sd: { guidance_scale: 7.5, strength: 0.8 },
    sdxl: { guidance_scale: 5, strength: 0.3 },
  };

/** Fields both pipelines take. */
export function commonParameters(limits: GenerationLimits, family: PipelineFamily = 'sd') {
  return {
    prompt: promptField(limits).describe('What to draw'),
    negative_prompt: promptField(limits).nullable().default(null).describe('What to steer away from'),
    // The default obeys the limit too: a request that leaves it out must not get more steps than one may ask.
    num_inference_steps: z
      .int()
      .min(1)
      .max(limits.maxSteps)
      .default(Math.min(DEFAULT_STEPS, limits.maxSteps)),
    guidance_scale: z
      .number()
      .min(0)
      .max(50)
      .default(FAMILY_DEFAULTS[family].guidance_scale)
      .describe('Classifier-free guidance; ≤ 1 turns it off'),
    eta: z.number().min(0).max(1).default(0).describe('DDIM η; other schedulers ignore it'),
    seed: z
      .int()
      .min(0)
      .max(2 ** 32 - 1)
      .nullable()
      .default(null)
      .describe('Random when absent; image k of a request uses seed + k'),
    scheduler: z
      .enum(SCHEDULER_NAMES as [SchedulerName, ...SchedulerName[]])
      .nullable()
      .default(null)
      .describe("Default: the model's"),
    num_images_per_prompt: z.int().min(1).max(limits.maxImages).default(1),
    guidance_rescale: z.number().min(0).max(1).default(0).describe('φ of diffusers guidance_rescale'),
    clip_skip: z.int().min(0).max(24).default(0).describe('Use the (k+1)-th last text encoder layer'),
  };
}

/** A prompt: text, bounded when the limit is finite (an infinite bound would not survive into OpenAPI's JSON). */
function promptField(limits: GenerationLimits) {
  return Number.isFinite(limits.maxPromptLength) ? z.string().max(limits.maxPromptLength) : z.string();
}

function sizeField(limits: GenerationLimits, defaultSize: number) {
  return z.int().min(8).max(limits.maxSize).multipleOf(8).default(Math.min(defaultSize, limits.maxSize));
}

/** text2img parameters; `defaultSize` is the model's own (unet sample_size × VAE scale factor). */
export function text2imgParameters(
  limits: GenerationLimits,
  defaultSize: number,
  family: PipelineFamily = 'sd',
) {
  return z.looseObject({
    ...commonParameters(limits, family),
    height: sizeField(limits, defaultSize),
    width: sizeField(limits, defaultSize),
  });
}

/** img2img parameters (the image itself travels beside them). */
export function img2imgParameters(limits: GenerationLimits, family: PipelineFamily = 'sd') {
  return z.looseObject({
    ...commonParameters(limits, family),
    strength: z
      .number()
      .min(0)
      .max(1)
      .default(FAMILY_DEFAULTS[family].strength)
      .describe('How much of the image is re-drawn'),
  });
}

/** Validated common parameters, defaults filled in. */
export type GenerationParameters = z.output<z.ZodObject<ReturnType<typeof commonParameters>>>;

/** `value` checked against `schema` with defaults applied; a violation is an `InvalidArgument` naming the field. */
export function validateParameters<S extends z.ZodType>(schema: S, value: unknown): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issues = result.error.issues.map((i) => ({ path: i.path.map(String), message: i.message }));
  const first = issues[0];
  throw new InvalidArgument(
    `${first.path.join('.') || 'request'}: ${first.message}${issues.length > 1 ? ` (and ${issues.length - 1} more)` : ''}`,
    { detail: issues },
  );
}
