import { z } from 'zod';
import { CANNY_DEFAULT_HIGH, CANNY_DEFAULT_LOW } from './canny.js';

/**
 * What is done to a unit's image before ControlNet sees it: `none`, it is the map already (an edge, depth or pose
 * map made elsewhere); `canny`, Canny edges of the picture (OpenCV's, A1111's `canny` module).
 */
export const CONTROLNET_MODULES = ['none', 'canny'] as const;
export type ControlNetModule = (typeof CONTROLNET_MODULES)[number];

/** A1111's control modes, by the native names (docs/a1111-api.md, ControlNet). */
export const CONTROL_MODES = ['balanced', 'prompt', 'controlnet'] as const;

/** A1111's resize modes ("Just Resize", "Crop and Resize", "Resize and Fill"), by the native names. */
export const RESIZE_MODES = ['just_resize', 'crop_and_resize', 'resize_and_fill'] as const;
export type ResizeMode = (typeof RESIZE_MODES)[number];

/** ControlNet units one request may carry unless the service says otherwise. */
export const DEFAULT_MAX_CONTROLNETS = 4;

/** One `controlnet` unit of a native request body (docs/diffusion-service.md, "ControlNet"). */
const unit = z
  .object({
    model: z.string().min(1).max(255).describe('A ControlNet the service loaded, by its name (GET /models)'),
    image: z
      .string()
      .min(1)
      .describe(
        'The conditioning image, base64 PNG, JPEG or WebP (a data: URL too): the map itself (module none) or the picture the module reads',
      ),
    module: z
      .enum(CONTROLNET_MODULES)
      .default('none')
      .describe('none: image is the map; canny: Canny edges of image (OpenCV, A1111 defaults 100/200)'),
    conditioning_scale: z
      .number()
      .min(0)
      .max(10)
      .default(1)
      .describe("Weight of this ControlNet's residuals (A1111's weight)"),
    guidance_start: z.number().min(0).max(1).default(0).describe('Fraction of the steps where it starts'),
    guidance_end: z.number().min(0).max(1).default(1).describe('Fraction of the steps where it stops'),
    guess_mode: z
      .boolean()
      .default(false)
      .describe('Residuals on the conditional half only, scaled up the blocks (diffusers guess_mode)'),
    control_mode: z
      .enum(CONTROL_MODES)
      .default('balanced')
      .describe(
        "A1111's control mode: balanced; prompt (My prompt is more important: residual k of 13 scaled by 0.825^(12-k)); controlnet (ControlNet is more important: so scaled, on the conditional half only)",
      ),
    resize_mode: z
      .enum(RESIZE_MODES)
      .default('just_resize')
      .describe(
        "How the image meets the generation's size (A1111's resize_mode): just_resize stretches it; crop_and_resize scales it to cover, then crops the middle; resize_and_fill scales it to fit, then fills the rest with its border's median colour",
      ),
    processor_res: z
      .number()
      .int()
      .min(64)
      .max(2048)
      .nullable()
      .default(null)
      .describe(
        "The module's resolution (A1111's processor_res): the picture's short side is resized to it, the module runs there, then the map meets the generation's size by resize_mode; null: the module runs at the generation's size (pixel perfect)",
      ),
    low_threshold: z
      .number()
      .min(0)
      .max(10_000)
      .default(CANNY_DEFAULT_LOW)
      .describe('canny: the hysteresis low threshold on the L1 gradient (A1111 threshold_a)'),
    high_threshold: z
      .number()
      .min(0)
      .max(10_000)
      .default(CANNY_DEFAULT_HIGH)
      .describe('canny: the high threshold, where edges start (A1111 threshold_b)'),
  })
  .refine((u) => u.guidance_end >= u.guidance_start, {
    path: ['guidance_end'],
    message: 'guidance_end must be at least guidance_start',
  });

/** `controlnet`: ControlNet units guiding this generation, applied together (null: none). */
export function controlnetField(maxUnits: number) {
  return z
    .array(unit)
    .max(maxUnits)
    .nullable()
    .default(null)
    .describe(`ControlNet units (at most ${maxUnits}) guiding the generation; their models: GET /models`);
}

export type ControlNetBody = z.infer<typeof unit>;
