import { UnprocessableEntity } from '@tiffin/core';
import type { HiresBody } from '../../hires-request.js';
import type { HiresUpscaler } from '../../worker-protocol.js';
import { promptLoras } from './prompt-loras.js';

/** A1111's `hr_upscaler` names this service runs, as the native `hires.upscaler` (A1111's `None` resizes by Lanczos). */
const UPSCALERS: Readonly<Record<string, HiresUpscaler>> = {
  Latent: 'latent',
  'Latent (nearest)': 'latent-nearest',
  Lanczos: 'lanczos',
  None: 'lanczos',
};
const MAX_SCALE = 8;
/** A1111's txt2img `denoising_strength` when a hires request leaves it out. */
const DEFAULT_STRENGTH = 0.75;

/** A txt2img request's hires fix: the native `hires` body, and what its infotext says of it (A1111's names). */
export interface A1111Hires {
  body: NonNullable<HiresBody>;
  strength: number;
  /** `Hires upscale` (by scale) or `Hires resize` (`WxH`, by hr_resize_x/y). */
  upscale: number | null;
  resize: string | null;
  /** `Hires steps`: only when hr_second_pass_steps is set. */
  steps: number | null;
  upscaler: string;
}

function field(body: Record<string, unknown>, name: string, fallback: number): number {
  const value = body[name] ?? fallback;
  if (typeof value !== 'number' || !Number.isFinite(value))
    throw new UnprocessableEntity(`${name} must be a number`);
  return value;
}

function side(body: Record<string, unknown>, name: string, maxSize: number): number {
  const value = field(body, name, 0);
  if (!Number.isInteger(value) || value < 0 || value > maxSize)
    throw new UnprocessableEntity(`${name} must be 0 (from hr_scale) or an integer up to ${maxSize}`);
  return value;
}

function text(body: Record<string, unknown>, name: string): string | null {
  const value = body[name];
  if (value === undefined || value === null || value === '') return null;
  if (typeof value !== 'string') throw new UnprocessableEntity(`${name} must be a string`);
  return promptLoras(value).prompt;
}

/**
 * A1111's hires fix fields (`enable_hr`, `hr_scale`, `hr_resize_x`/`hr_resize_y`, `hr_upscaler`,
 * `denoising_strength`, `hr_second_pass_steps`, `hr_prompt`, `hr_negative_prompt`) as the native `hires` option;
 * null without `enable_hr`. A final size over the served `maxSize` is a 422 naming the field, before any work.
 */
export function a1111Hires(
  body: Record<string, unknown>,
  width: number,
  height: number,
  maxSize: number,
): A1111Hires | null {
  if (body.enable_hr !== true) return null;
  const scale = field(body, 'hr_scale', 2);
  if (scale < 1 || scale > MAX_SCALE)
    throw new UnprocessableEntity(`hr_scale must be from 1 to ${MAX_SCALE}`);
  const x = side(body, 'hr_resize_x', maxSize);
  const y = side(body, 'hr_resize_y', maxSize);
  if (x === 0 && y === 0 && (width * scale > maxSize || height * scale > maxSize))
    throw new UnprocessableEntity(
      `hr_scale ${scale} makes ${Math.floor(width * scale)}×${Math.floor(height * scale)}, over the largest served size (${maxSize} px a side)`,
    );
  const name = body.hr_upscaler ?? 'Latent';
  const upscaler = typeof name === 'string' ? UPSCALERS[name] : undefined;
  if (!upscaler || !Object.hasOwn(UPSCALERS, name as string))
    throw new UnprocessableEntity(`hr_upscaler must be one of ${Object.keys(UPSCALERS).join(', ')}`);
  const strength = field(body, 'denoising_strength', DEFAULT_STRENGTH);
  if (strength < 0 || strength > 1) throw new UnprocessableEntity('denoising_strength must be from 0 to 1');
  const steps = field(body, 'hr_second_pass_steps', 0);
  if (!Number.isInteger(steps) || steps < 0)
    throw new UnprocessableEntity('hr_second_pass_steps must be an integer ≥ 0');
  const byScale = x === 0 && y === 0;
  return {
    body: {
      scale,
      width: x || null,
      height: y || null,
      upscaler,
      strength,
      steps,
      prompt: text(body, 'hr_prompt'),
      negative_prompt: text(body, 'hr_negative_prompt'),
    },
    strength,
    upscale: byScale ? scale : null,
    resize: byScale ? null : `${x}x${y}`,
    steps: steps > 0 ? steps : null,
    upscaler: name as string,
  };
}
