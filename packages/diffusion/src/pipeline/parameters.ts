import { InvalidArgument } from '@tiffin/core';
import { z } from 'zod';
import { SCHEDULER_NAMES, type SchedulerName } from '../schedulers/registry.js';
import type { ModelDefaults } from './model-defaults.js';

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
   * Longest `prompt` / `negative_prompt` (and SDXL's `prompt_2` / `negative_prompt_2`) in characters. CLIP reads only the first 75 tokens, but the tokenizer
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

/**
 * Fields both pipelines take. `defaults` are the model's own (its `tiffin_defaults.json`, a LoRA's): they replace
 * diffusers' family defaults where given.
 */
export function commonParameters(
  limits: GenerationLimits,
  family: PipelineFamily = 'sd',
  defaults: ModelDefaults = {},
) {
  return {
    prompt: promptField(limits).describe('What to draw'),
    negative_prompt: promptField(limits)
      .nullable()
      .default(defaults.negative_prompt ?? null)
      .describe('What to steer away from'),
    // The default obeys the limit too: a request that leaves it out must not get more steps than one may ask.
    num_inference_steps: z
      .int()
      .min(1)
      .max(limits.maxSteps)
      .default(Math.min(defaults.num_inference_steps ?? DEFAULT_STEPS, limits.maxSteps)),
    guidance_scale: z
      .number()
      .min(0)
      .max(50)
      .default(defaults.guidance_scale ?? FAMILY_DEFAULTS[family].guidance_scale)
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
      .default(defaults.scheduler ?? null)
      .describe("null: the model folder's own (scheduler/scheduler_config.json)"),
    timestep_spacing: z
      .enum(['leading', 'trailing', 'linspace'])
      .nullable()
      .default(null)
      .describe(
        "The scheduler's timestep spacing (diffusers' timestep_spacing; trailing for SD-Turbo); null: the model's. Not for lcm",
      ),
    use_karras_sigmas: z
      .boolean()
      .nullable()
      .default(null)
      .describe("Karras noise levels (not ddim, pndm, euler_a, lcm); null: the model's"),
    num_images_per_prompt: z.int().min(1).max(limits.maxImages).default(1),
    guidance_rescale: z.number().min(0).max(1).default(0).describe('φ of diffusers guidance_rescale'),
    clip_skip: z.int().min(0).max(24).default(0).describe('Use the (k+1)-th last text encoder layer'),
    prompt_weighting: z
      .boolean()
      .default(true)
      .describe(
        "AUTOMATIC1111's prompt reading: (word:1.3), (word), [word], \\( escapes, BREAK, and prompts past 75 tokens in chunks of 75 (up to 600 tokens). false: the prompt as literal text, cut after 75 tokens (diffusers)",
      ),
    decoder: z
      .enum(['tiny', 'full'])
      .nullable()
      .default(null)
      .describe(
        "'tiny': the tiny autoencoder loaded at start (--vae-tiny), fast; 'full': the model's VAE. Default: tiny when loaded",
      ),
    ...sdxlParameters(limits),
  };
}

/**
 * Largest original/target size and crop offset SDXL's micro-conditioning takes, in pixels. The values only enter a
 * sinusoidal embedding (nothing is allocated by them), so the bound is generous: 16 × SDXL's 1024-pixel training
 * size, well above the `original_size` [4096, 4096] people ask for, while a typo or a 2^40 is a 400.
 */
const MAX_CONDITIONING_SIZE = 16_384;

/** `[height, width]` of SDXL's micro-conditioning: positive integers. */
const conditioningSize = z.tuple([
  z.int().min(1).max(MAX_CONDITIONING_SIZE),
  z.int().min(1).max(MAX_CONDITIONING_SIZE),
]);

/** `[top, left]` crop offset of SDXL's micro-conditioning: integers ≥ 0. */
const conditioningOffset = z.tuple([
  z.int().min(0).max(MAX_CONDITIONING_SIZE),
  z.int().min(0).max(MAX_CONDITIONING_SIZE),
]);

/**
 * SDXL's second-encoder prompts and micro-conditioning (diffusers' `StableDiffusionXLPipeline` arguments, same names
 * and meaning). `null` means not given; `""` prompts count as not given too, as in diffusers (`prompt_2 or prompt`).
 * An SD 1.x/2.x model refuses them (`sdxlRules`), rather than ignoring them as diffusers would.
 */
function sdxlParameters(limits: GenerationLimits) {
  return {
    prompt_2: promptField(limits)
      .nullable()
      .default(null)
      .describe('SDXL: the prompt for the second text encoder (tokenizer_2/text_encoder_2); default: prompt'),
    negative_prompt_2: promptField(limits)
      .nullable()
      .default(null)
      .describe('SDXL: the negative prompt for the second text encoder; default: negative_prompt'),
    original_size: conditioningSize
      .nullable()
      .default(null)
      .describe(
        'SDXL micro-conditioning [height, width] of the image before resizing; default [height, width]',
      ),
    crops_coords_top_left: conditioningOffset
      .nullable()
      .default(null)
      .describe('SDXL micro-conditioning [top, left] of the crop; default [0, 0] (well-centred images)'),
    target_size: conditioningSize
      .nullable()
      .default(null)
      .describe('SDXL micro-conditioning [height, width] of the result; default [height, width]'),
    negative_original_size: conditioningSize
      .nullable()
      .default(null)
      .describe(
        'SDXL: original_size of the negative conditioning; text2img: only with negative_target_size; default: original_size',
      ),
    negative_crops_coords_top_left: conditioningOffset
      .nullable()
      .default(null)
      .describe(
        'SDXL text2img: crops_coords_top_left of the negative conditioning, with negative_original_size and negative_target_size; default [0, 0]',
      ),
    negative_target_size: conditioningSize
      .nullable()
      .default(null)
      .describe(
        'SDXL: target_size of the negative conditioning; text2img: only with negative_original_size; default: target_size',
      ),
  };
}

/** The SDXL-only fields, in request order. */
const SDXL_FIELDS = Object.keys(sdxlParameters(NO_LIMITS)) as ReadonlyArray<
  keyof ReturnType<typeof sdxlParameters>
>;

/** Which pipeline a request is for: their SDXL negative micro-conditioning differs (see `sdxlRules`). */
export type PipelineKind = 'text2img' | 'img2img';

type SdxlFieldValues = { [K in (typeof SDXL_FIELDS)[number]]: unknown } & { negative_prompt: unknown };

/**
 * What Tiffin refuses where diffusers would silently ignore a field, so that every accepted field has its effect:
 * - SDXL fields on an SD 1.x/2.x model (one text encoder, no micro-conditioning);
 * - `negative_prompt_2` without `negative_prompt`: diffusers then zeroes the negative conditioning
 *   (`force_zeros_for_empty_prompt`, true for SDXL base; refused whatever the folder says, so the rule does not
 *   depend on the model); `negative_prompt: ""` puts `negative_prompt_2` to use alone;
 * - text2img: `negative_original_size` without `negative_target_size` or the reverse, and
 *   `negative_crops_coords_top_left` without both (diffusers uses the negative sizes only as a pair);
 * - img2img: `negative_crops_coords_top_left` (diffusers' img2img takes `crops_coords_top_left` for both rows).
 */
export function sdxlRules(family: PipelineFamily, kind: PipelineKind) {
  return (value: SdxlFieldValues, ctx: z.RefinementCtx) => {
    const refuse = (field: string, message: string) =>
      ctx.addIssue({ code: 'custom', path: [field], message });
    const given = (field: keyof SdxlFieldValues) => value[field] !== null && value[field] !== undefined;
    if (family === 'sd') {
      for (const field of SDXL_FIELDS)
        if (given(field))
          refuse(
            field,
            `${field} is an SDXL parameter: this Stable Diffusion 1.x/2.x model has one text encoder and no micro-conditioning`,
          );
      return;
    }
    if (
      typeof value.negative_prompt_2 === 'string' &&
      value.negative_prompt_2 !== '' &&
      !given('negative_prompt')
    )
      refuse(
        'negative_prompt_2',
        'negative_prompt_2 needs negative_prompt: without it SDXL zeroes the negative conditioning (force_zeros_for_empty_prompt); send negative_prompt "" to use negative_prompt_2 alone',
      );
    if (kind === 'img2img') {
      if (given('negative_crops_coords_top_left'))
        refuse(
          'negative_crops_coords_top_left',
          'negative_crops_coords_top_left is not used by SDXL img2img (its negative conditioning takes crops_coords_top_left)',
        );
      return;
    }
    if (given('negative_original_size') !== given('negative_target_size'))
      refuse(
        given('negative_original_size') ? 'negative_target_size' : 'negative_original_size',
        'negative_original_size and negative_target_size go together (one alone has no effect in SDXL text2img)',
      );
    else if (given('negative_crops_coords_top_left') && !given('negative_original_size'))
      refuse(
        'negative_crops_coords_top_left',
        'negative_crops_coords_top_left needs negative_original_size and negative_target_size',
      );
  };
}

/** A prompt: text, bounded when the limit is finite (an infinite bound would not survive into OpenAPI's JSON). */
function promptField(limits: GenerationLimits) {
  return Number.isFinite(limits.maxPromptLength) ? z.string().max(limits.maxPromptLength) : z.string();
}

function sizeField(limits: GenerationLimits, defaultSize: number) {
  return z.int().min(8).max(limits.maxSize).multipleOf(8).default(Math.min(defaultSize, limits.maxSize));
}

/** text2img's fields; `defaultSize` is the model's own (unet sample_size × VAE scale factor). */
export function text2imgFields(
  limits: GenerationLimits,
  defaultSize: number,
  family: PipelineFamily = 'sd',
  defaults: ModelDefaults = {},
) {
  return {
    ...commonParameters(limits, family, defaults),
    height: sizeField(limits, defaults.height ?? defaultSize),
    width: sizeField(limits, defaults.width ?? defaultSize),
  };
}

/** text2img parameters: {@link text2imgFields} with the SDXL rules. */
export function text2imgParameters(
  limits: GenerationLimits,
  defaultSize: number,
  family: PipelineFamily = 'sd',
  defaults: ModelDefaults = {},
) {
  return z
    .looseObject(text2imgFields(limits, defaultSize, family, defaults))
    .superRefine(sdxlRules(family, 'text2img'));
}

/** img2img's fields (the image itself travels beside them). */
export function img2imgFields(
  limits: GenerationLimits,
  family: PipelineFamily = 'sd',
  defaults: ModelDefaults = {},
) {
  return {
    ...commonParameters(limits, family, defaults),
    strength: z
      .number()
      .min(0)
      .max(1)
      .default(FAMILY_DEFAULTS[family].strength)
      .describe('How much of the image is re-drawn'),
  };
}

/** img2img parameters: {@link img2imgFields} with the SDXL rules. */
export function img2imgParameters(
  limits: GenerationLimits,
  family: PipelineFamily = 'sd',
  defaults: ModelDefaults = {},
) {
  return z.looseObject(img2imgFields(limits, family, defaults)).superRefine(sdxlRules(family, 'img2img'));
}

/**
 * Inpainting fields: img2img's with strength default 1 (the masked part starts from pure noise), as diffusers'
 * `StableDiffusionInpaintPipeline`.
 */
export function inpaintFields(
  limits: GenerationLimits,
  family: PipelineFamily = 'sd',
  defaults: ModelDefaults = {},
) {
  return {
    ...img2imgFields(limits, family, defaults),
    strength: z.number().min(0).max(1).default(1).describe('How much of the masked part is re-drawn'),
  };
}

/** Inpainting is SD 1.x/2.x only (for now); otherwise img2img's SDXL rules. */
export function inpaintRules(family: PipelineFamily) {
  const img2img = sdxlRules(family, 'img2img');
  return (value: Parameters<typeof img2img>[0], ctx: z.RefinementCtx) => {
    if (family !== 'sd')
      ctx.addIssue({
        code: 'custom',
        path: ['image'],
        message: 'inpainting is available for Stable Diffusion 1.x/2.x models, not SDXL yet',
      });
    img2img(value, ctx);
  };
}

/** Inpainting parameters (the image and mask travel beside them). */
export function inpaintParameters(
  limits: GenerationLimits,
  family: PipelineFamily = 'sd',
  defaults: ModelDefaults = {},
) {
  return z.looseObject(inpaintFields(limits, family, defaults)).superRefine(inpaintRules(family));
}

type CommonOutput = z.output<z.ZodObject<ReturnType<typeof commonParameters>>>;
type SdxlField = (typeof SDXL_FIELDS)[number];

/** Fields a caller building parameters by hand may leave out (absent is "not given", like null). */
type OptionalField = SdxlField | 'timestep_spacing' | 'use_karras_sigmas' | 'decoder' | 'prompt_weighting';

/** Validated common parameters, defaults filled in; the optional fields above may be absent. */
export type GenerationParameters = Omit<CommonOutput, OptionalField> &
  Partial<Pick<CommonOutput, OptionalField>>;

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
