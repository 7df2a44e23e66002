import { z } from 'zod';
import type { ModelDefaults } from '../pipeline/model-defaults.js';
import {
  commonParameters,
  type GenerationLimits,
  type GenerationParameters,
  img2imgFields,
  inpaintFields,
  inpaintRules,
  type PipelineFamily,
  sdxlRules,
  text2imgFields,
} from '../pipeline/parameters.js';
import { controlnetField, DEFAULT_MAX_CONTROLNETS } from './controlnet/controlnet-schema.js';
import { hiresField } from './hires-request.js';
import { OUTPUT_FORMATS, type OutputFormat } from './output-format.js';

export type { GenerationLimits } from '../pipeline/parameters.js';

/**
 * The service's bounds unless configured: 150 steps, 4 images, prompts of 10,000 characters, 4 LoRAs per request;
 * `maxSize` here (1024 px) is the library's fallback: the service takes twice the model's own size.
 */
export const DEFAULT_GENERATION_LIMITS: ServiceLimits = {
  maxSize: 1024,
  maxSteps: 150,
  maxImages: 4,
  maxPromptLength: 10_000,
  maxLoras: 4,
  maxControlNets: DEFAULT_MAX_CONTROLNETS,
};

/** The library's bounds and the service's own: LoRAs and ControlNet units per request. */
export type ServiceLimits = GenerationLimits & { maxLoras: number; maxControlNets?: number };

/** `controlnet`, bounded by the service's count. */
function controlnetOf(limits: ServiceLimits) {
  return controlnetField(limits.maxControlNets ?? DEFAULT_MAX_CONTROLNETS);
}

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

/** `output_format` and `output_quality`: the answer's image format, which otherwise `Accept` picks. */
function outputFields() {
  return {
    output_format: z
      .enum(OUTPUT_FORMATS)
      .nullable()
      .default(null)
      .describe('jpeg, png or webp; null: the best image type in Accept, else jpeg'),
    output_quality: z
      .int()
      .min(1)
      .max(100)
      .nullable()
      .default(null)
      .describe('JPEG/WebP quality 1–100 (null: 80); not for png'),
  };
}

/** `model`: the checkpoint to generate with, by the name the service lists (`GET /models`). */
function modelField() {
  return z
    .string()
    .max(255)
    .nullable()
    .default(null)
    .describe("Checkpoint to generate with, as GET /models lists it (null: the service's start model)");
}

/** Fields a request's LoRA may bring defaults for (an LCM-LoRA: its scheduler, 4 steps, no guidance). */
export const LORA_DEFAULTED_FIELDS = ['scheduler', 'num_inference_steps', 'guidance_scale'] as const;
export type LoraDefaultedField = (typeof LORA_DEFAULTED_FIELDS)[number];

/**
 * The {@link LORA_DEFAULTED_FIELDS} as optional body fields: their default (shown in OpenAPI) depends on the
 * request's `lora_weights`, so the service fills them in once it knows the LoRAs (`withLoraDefaults`).
 */
function loraDefaultedFields(limits: GenerationLimits, family: PipelineFamily, defaults: ModelDefaults) {
  const common = commonParameters(limits, family, defaults);
  const optional = <T extends z.ZodType>(field: z.ZodDefault<T>) =>
    field
      .unwrap()
      .optional()
      .meta({ default: field.def.defaultValue as never });
  return {
    scheduler: optional(common.scheduler).describe(
      "null or left out: the model's default; an LCM-LoRA in lora_weights makes it lcm",
    ),
    num_inference_steps: optional(common.num_inference_steps).describe(
      "Left out: the model's default; an LCM-LoRA in lora_weights makes it 4",
    ),
    guidance_scale: optional(common.guidance_scale).describe(
      "Classifier-free guidance; ≤ 1 turns it off. Left out: the model's default; an LCM-LoRA in lora_weights makes it 1",
    ),
  };
}

/**
 * Body of `POST /text2img`: the library's text2img parameters (one definition of names, bounds and
 * defaults, the model's own `defaults` included) plus the service's `lora_weights`. Unknown fields are accepted
 * (and ignored) like the reference service does.
 */
export function text2imgSchema(
  limits: ServiceLimits,
  defaultSize: number,
  family: PipelineFamily = 'sd',
  defaults: ModelDefaults = {},
) {
  return z
    .looseObject({
      ...text2imgFields(limits, defaultSize, family, defaults),
      ...loraDefaultedFields(limits, family, defaults),
      ...outputFields(),
      lora_weights: loraField(limits.maxLoras),
      model: modelField(),
      controlnet: controlnetOf(limits),
      hires: hiresField(limits),
    })
    .superRefine(sdxlRules(family, 'text2img'));
}

/** The `data` part of `POST /img2img`. */
export function img2imgSchema(
  limits: ServiceLimits,
  family: PipelineFamily = 'sd',
  defaults: ModelDefaults = {},
) {
  return z
    .looseObject({
      ...img2imgFields(limits, family, defaults),
      ...loraDefaultedFields(limits, family, defaults),
      ...outputFields(),
      lora_weights: loraField(limits.maxLoras),
      model: modelField(),
      controlnet: controlnetOf(limits),
    })
    .superRefine(sdxlRules(family, 'img2img'));
}

/** The `data` part of `POST /inpaint`. */
export function inpaintSchema(
  limits: ServiceLimits,
  family: PipelineFamily = 'sd',
  defaults: ModelDefaults = {},
) {
  return z
    .looseObject({
      ...inpaintFields(limits, family, defaults),
      ...loraDefaultedFields(limits, family, defaults),
      ...outputFields(),
      lora_weights: loraField(limits.maxLoras),
      model: modelField(),
      controlnet: controlnetOf(limits),
    })
    .superRefine(inpaintRules(family));
}

export type Text2ImgBody = z.infer<ReturnType<typeof text2imgSchema>>;
export type Img2ImgBody = z.infer<ReturnType<typeof img2imgSchema>>;
export type InpaintBody = z.infer<ReturnType<typeof inpaintSchema>>;

/** A request's LoRAs as a list, whatever form `lora_weights` took. */
export function requestLoras(value: Text2ImgBody['lora_weights']): Array<{ path: string; weight: number }> {
  if (value === null) return [];
  return typeof value === 'string' ? [{ path: value, weight: 1 }] : value;
}

/** The model's values of the {@link LORA_DEFAULTED_FIELDS} (its `defaults` within `limits`, else diffusers'). */
export function defaultedValues(
  limits: GenerationLimits,
  family: PipelineFamily,
  defaults: ModelDefaults,
): Pick<GenerationParameters, LoraDefaultedField> {
  const { scheduler, num_inference_steps, guidance_scale } = commonParameters(limits, family, defaults);
  return z.object({ scheduler, num_inference_steps, guidance_scale }).parse({});
}

/**
 * The generation parameters of a validated body (without the service's own fields); the
 * {@link LORA_DEFAULTED_FIELDS} it left out take `defaults` (the model's, then its LoRAs').
 */
export function generationParameters(
  body: Text2ImgBody | Img2ImgBody | InpaintBody,
  defaults: Pick<GenerationParameters, LoraDefaultedField>,
): GenerationParameters {
  return {
    prompt: body.prompt,
    negative_prompt: body.negative_prompt,
    num_inference_steps: body.num_inference_steps ?? defaults.num_inference_steps,
    guidance_scale: body.guidance_scale ?? defaults.guidance_scale,
    eta: body.eta,
    seed: body.seed,
    scheduler: body.scheduler ?? defaults.scheduler,
    num_images_per_prompt: body.num_images_per_prompt,
    timestep_spacing: body.timestep_spacing,
    use_karras_sigmas: body.use_karras_sigmas,
    guidance_rescale: body.guidance_rescale,
    clip_skip: body.clip_skip,
    prompt_weighting: body.prompt_weighting,
    decoder: body.decoder,
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

/** The LoRA-defaulted fields a body left out (a null scheduler counts as left out). */
export function leftOutFields(body: Record<string, unknown>): LoraDefaultedField[] {
  return LORA_DEFAULTED_FIELDS.filter((f) => body[f] === undefined || body[f] === null);
}

/** The answer's format and quality as a body asks them (`output_format`, `output_quality`). */
export function requestedOutput(body: Text2ImgBody | Img2ImgBody | InpaintBody): RequestedOutput {
  return { format: body.output_format, quality: body.output_quality };
}

/** The answer's format and quality as the body asks (null: negotiated from `Accept`, default quality). */
export interface RequestedOutput {
  format: OutputFormat | null;
  quality: number | null;
}

/** Body of `POST /progress`: follow one request, or every generation when absent. */
export const progressSchema = z.looseObject({ request_id: z.string().nullable().default(null) });
