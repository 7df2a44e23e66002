import { BadInput } from '@tiffin/core';
import { z } from 'zod';
import type { GenerationLimits } from '../pipeline/parameters.js';
import type { HiresUpscaler, JobHires } from './worker-protocol.js';

const UPSCALERS = ['latent', 'latent-nearest', 'lanczos'] as const satisfies readonly HiresUpscaler[];
/** The largest `hires.scale`; the final size is bounded by the served size anyway. */
const MAX_SCALE = 8;
/** Hires sizes are whole latent pixels. */
const GRID = 8;

/** `hires` of `POST /text2img`: A1111's hires fix (docs/diffusion-service.md, "Hires fix"); null: none. */
export function hiresField(limits: GenerationLimits) {
  const side = z.int().min(GRID).max(limits.maxSize).nullable().default(null);
  const text = z.string().max(limits.maxPromptLength).nullable().default(null);
  return z
    .object({
      scale: z
        .number()
        .min(1)
        .max(MAX_SCALE)
        .default(2)
        .describe('Upscale factor of the first pass (default 2)'),
      width: side.describe('Final width instead of scale (height from the aspect unless given)'),
      height: side.describe('Final height instead of scale (width from the aspect unless given)'),
      upscaler: z
        .enum(UPSCALERS)
        .default('latent')
        .describe('latent (bilinear), latent-nearest, or lanczos (the decoded image, encoded again)'),
      strength: z
        .number()
        .min(0)
        .max(1)
        .default(0.75)
        .describe('How much the second pass re-draws (0: none)'),
      steps: z
        .int()
        .min(0)
        .max(limits.maxSteps)
        .default(0)
        .describe("Second pass steps (0: the first pass's)"),
      prompt: text.describe("Second pass prompt (null: the first pass's)"),
      negative_prompt: text.describe("Second pass negative prompt (null: the first pass's)"),
    })
    .nullable()
    .default(null)
    .describe('Hires fix: upscale the first pass, then re-draw it as img2img (A1111 enable_hr)');
}

export type HiresBody = z.infer<ReturnType<typeof hiresField>>;

/**
 * The hires pass of a `width` × `height` first pass: its final size from `scale` (or `width`/`height`, as A1111's
 * `hr_resize_x`/`hr_resize_y`, the other side from the aspect), rounded down to multiples of 8 and within the served
 * `maxSize` a side (400 naming the field otherwise, before anything is allocated).
 */
export function hiresJob(
  hires: HiresBody,
  width: number,
  height: number,
  maxSize: number,
): JobHires | undefined {
  if (!hires) return undefined;
  let w: number;
  let h: number;
  let field: string;
  if (hires.width === null && hires.height === null) {
    [w, h, field] = [Math.floor(width * hires.scale), Math.floor(height * hires.scale), 'hires.scale'];
  } else if (hires.height === null) {
    [w, h, field] = [
      hires.width as number,
      Math.floor(((hires.width as number) * height) / width),
      'hires.width',
    ];
  } else if (hires.width === null) {
    [w, h, field] = [Math.floor((hires.height * width) / height), hires.height, 'hires.height'];
  } else {
    if (hires.width * height !== hires.height * width)
      throw new BadInput(
        `hires.width and hires.height must keep the first pass's aspect (${width}×${height}); give one of them`,
      );
    [w, h, field] = [hires.width, hires.height, 'hires.width'];
  }
  w -= w % GRID;
  h -= h % GRID;
  if (w > maxSize || h > maxSize || w < GRID || h < GRID)
    throw new BadInput(
      `${field}: the hires size ${w}×${h} must be from ${GRID} to ${maxSize} px a side (the largest served)`,
    );
  const { upscaler, strength, steps, prompt, negative_prompt } = hires;
  return { width: w, height: h, upscaler, strength, steps, prompt, negative_prompt };
}
