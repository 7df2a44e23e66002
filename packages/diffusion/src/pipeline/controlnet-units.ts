import { InvalidArgument } from '@tiffin/core';
import sharp from 'sharp';
import type { ControlNetEngine } from '../engines/engine-models.js';
import type { HostTensor } from '../latents/host-tensor.js';
import { resizeLanczos } from '../latents/lanczos-resize.js';
import type { ControlMode, ControlNetUnit, RgbImage } from './types.js';

/** A client's mistake in `controlnet` (HTTP 400, INVALID_ARGUMENT); `field` names it (`controlnet[1].image`). */
export class ControlNetRequestError extends InvalidArgument {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(`${field}: ${message}`);
  }
}

/** A unit checked and its image prepared, ready for the denoising loop. */
export interface PreparedControlNet {
  readonly net: ControlNetEngine;
  /** NHWC [B or 2B, H, W, 3] in [0, 1]: repeated for the images, and for both guidance halves unless guess mode. */
  readonly image: HostTensor;
  readonly scale: number;
  readonly start: number;
  readonly end: number;
  readonly guessMode: boolean;
  /** A1111's control mode (`balanced` unless given). */
  readonly controlMode: ControlMode;
  /** Residuals averaged over the pixels (`global_pool_conditions`). */
  readonly globalPool: boolean;
}

const CONTROL_MODES: readonly ControlMode[] = ['balanced', 'prompt', 'controlnet'];

const number = (field: string, v: unknown, def: number, lo: number, hi: number): number => {
  if (v === undefined || v === null) return def;
  if (typeof v !== 'number' || !Number.isFinite(v) || v < lo || v > hi)
    throw new ControlNetRequestError(field, `must be a number in [${lo}, ${hi}], got ${JSON.stringify(v)}`);
  return v;
};

/** The unit's image as 8-bit RGB: decoded when encoded (sharp), checked when given as pixels. */
async function rgbOf(field: string, image: unknown): Promise<RgbImage & { data: Uint8Array }> {
  if (image instanceof Uint8Array) {
    try {
      const { data, info } = await sharp(image)
        .removeAlpha()
        .toColourspace('srgb')
        .raw()
        .toBuffer({ resolveWithObject: true });
      if (info.channels !== 3) throw new Error('not RGB');
      return {
        width: info.width,
        height: info.height,
        data: new Uint8Array(data.buffer, data.byteOffset, data.length),
      };
    } catch {
      throw new ControlNetRequestError(field, 'is not a PNG, JPEG or WebP image');
    }
  }
  const rgb = image as RgbImage | undefined;
  if (
    !rgb ||
    !(rgb.data instanceof Uint8Array) ||
    !Number.isInteger(rgb.width) ||
    !Number.isInteger(rgb.height) ||
    rgb.width < 1 ||
    rgb.height < 1 ||
    rgb.data.length !== rgb.width * rgb.height * 3
  )
    throw new ControlNetRequestError(
      field,
      'must be encoded image bytes or 8-bit RGB pixels (width × height × 3)',
    );
  return rgb as RgbImage & { data: Uint8Array };
}

/**
 * The conditioning image as diffusers' control image processor makes it (docs/spec/diffusion.md §8.4) (`VaeImageProcessor` with
 * `do_normalize=False`): RGB resized to the generation size with Pillow's Lanczos, values / 255, NHWC; then
 * repeated for each image of the request and, with guidance and not guess mode, for both halves of the batch.
 * A `bgr` net gets its channels flipped.
 */
function conditioningImage(
  rgb: RgbImage & { data: Uint8Array },
  width: number,
  height: number,
  copies: number,
  bgr: boolean,
): HostTensor {
  const sized = rgb.width === width && rgb.height === height ? rgb : resizeLanczos(rgb, width, height);
  const per = width * height * 3;
  const one = new Float32Array(per);
  for (let p = 0; p < per; p += 3)
    for (let ch = 0; ch < 3; ch++) one[p + ch] = Math.fround(sized.data[p + (bgr ? 2 - ch : ch)] / 255);
  const data = new Float32Array(per * copies);
  for (let k = 0; k < copies; k++) data.set(one, k * per);
  return { data, shape: [copies, height, width, 3] };
}

/**
 * The request's `controlnet` units checked against the loaded nets and their images prepared for a generation of
 * `width`×`height`, `batch` images, with or without guidance. Every mistake names its field.
 */
export async function prepareControlNets(
  units: unknown,
  nets: ReadonlyMap<string, ControlNetEngine>,
  g: { width: number; height: number; batch: number; guided: boolean },
): Promise<PreparedControlNet[]> {
  if (units === undefined || units === null) return [];
  if (!Array.isArray(units)) throw new ControlNetRequestError('controlnet', 'must be a list of units');
  if (units.length > 0 && nets.size === 0)
    throw new ControlNetRequestError('controlnet', 'this model has no ControlNet loaded');
  const prepared: PreparedControlNet[] = [];
  for (const [k, unit] of (units as unknown[]).entries()) {
    const at = `controlnet[${k}]`;
    if (typeof unit !== 'object' || unit === null) throw new ControlNetRequestError(at, 'must be an object');
    const u = unit as Partial<ControlNetUnit>;
    const net = typeof u.model === 'string' ? nets.get(u.model) : undefined;
    if (!net)
      throw new ControlNetRequestError(
        `${at}.model`,
        `unknown ControlNet ${JSON.stringify(u.model)} (loaded: ${[...nets.keys()].join(', ')})`,
      );
    const scale = number(`${at}.conditioning_scale`, u.conditioning_scale, 1, 0, 10);
    const start = number(`${at}.guidance_start`, u.guidance_start, 0, 0, 1);
    const end = number(`${at}.guidance_end`, u.guidance_end, 1, 0, 1);
    if (start >= end)
      throw new ControlNetRequestError(`${at}.guidance_end`, `must be above guidance_start (${start})`);
    if (u.guess_mode !== undefined && typeof u.guess_mode !== 'boolean')
      throw new ControlNetRequestError(`${at}.guess_mode`, 'must be a boolean');
    const controlMode = u.control_mode ?? 'balanced';
    if (!CONTROL_MODES.includes(controlMode))
      throw new ControlNetRequestError(`${at}.control_mode`, `must be one of ${CONTROL_MODES.join(', ')}`);
    const globalPool = net.config.global_pool_conditions === true;
    const guessMode = u.guess_mode === true || globalPool;
    // "ControlNet is more important" feeds the conditional half only, as guess mode does.
    const halfOnly = guessMode || controlMode === 'controlnet';
    const rgb = await rgbOf(`${at}.image`, u.image);
    const bgr = net.config.controlnet_conditioning_channel_order === 'bgr';
    const copies = g.guided && !halfOnly ? 2 * g.batch : g.batch;
    const image = conditioningImage(rgb, g.width, g.height, copies, bgr);
    prepared.push({ net, image, scale, start, end, guessMode, controlMode, globalPool });
  }
  return prepared;
}
