import { BadInput } from '@tiffin/core';
import { decodeUpload, UnreadableImage } from '../compat/decode-upload.js';
import { cannyOffThread, resizeOffThread } from '../kinds/images.js';
import type { Rgb8Image } from '../lanczos-resize.js';
import type { JobControlNet } from '../worker-protocol.js';
import { fitControlImage, processorSize } from './control-image-fit.js';
import type { ControlNetBody } from './controlnet-schema.js';

/** A request's ControlNet units as the worker gets them, prepared once the request is admitted. */
export type PendingControlNets = (signal?: AbortSignal) => Promise<JobControlNet[]>;

/** What the service knows of its ControlNets when it reads a request. */
export interface ControlNetContext {
  /** The names the service loaded (`--controlnet name=folder`), in order. */
  names: readonly string[];
  /** The header bound of an uploaded image (the img2img upload's). */
  maxPixels: number;
}

/**
 * A body's `controlnet` units checked against the loaded ControlNets (400 naming the field, `controlnet[0].model`)
 * and their base64 read now; their images are decoded, resized to the generation's `width`×`height` (Pillow's
 * Lanczos, as diffusers' control image processor) and run through their module when the request is admitted.
 */
export function controlnetRequest(
  units: readonly ControlNetBody[] | null | undefined,
  context: ControlNetContext,
  width: number,
  height: number,
): PendingControlNets | undefined {
  if (!units || units.length === 0) return undefined;
  if (context.names.length === 0)
    throw new BadInput(
      'controlnet: this service has no ControlNet loaded (start it with --controlnet <name>=<folder>)',
      { code: 'INVALID_VALUE' },
    );
  const read = units.map((u, i) => {
    if (!context.names.includes(u.model))
      throw new BadInput(
        `controlnet[${i}].model: unknown ControlNet ${JSON.stringify(u.model)} (this service has ${context.names.join(', ')})`,
        { code: 'INVALID_VALUE' },
      );
    return { unit: u, bytes: base64Bytes(u.image, `controlnet[${i}].image`) };
  });
  // The generation's signal: decodes, resizes and maps still waiting for a thread when it aborts are dropped.
  return (signal) =>
    Promise.all(
      read.map(async ({ unit: u, bytes }, i) => ({
        model: u.model,
        image: await conditioningMap(
          await decoded(bytes, `controlnet[${i}].image`, context.maxPixels, signal),
          u,
          width,
          height,
          signal,
        ),
        conditioning_scale: u.conditioning_scale,
        guidance_start: u.guidance_start,
        guidance_end: u.guidance_end,
        guess_mode: u.guess_mode,
        control_mode: u.control_mode,
      })),
    );
}

/**
 * The image at the generation's size, through its module: what ControlNet is conditioned on. Without
 * `processor_res` the picture meets the size by `resize_mode` and the module runs there (A1111's pixel perfect); with
 * it, the module runs on the picture at that short side and its map meets the size by `resize_mode` (docs/a1111-api.md,
 * ControlNet). The resizes and Canny run in the upload-resizing threads, off the event loop (a 4096×4096 picture's
 * resize takes seconds).
 */
export async function conditioningMap(
  picture: Rgb8Image,
  u: Pick<ControlNetBody, 'module' | 'low_threshold' | 'high_threshold' | 'resize_mode' | 'processor_res'>,
  width: number,
  height: number,
  signal?: AbortSignal,
): Promise<Rgb8Image> {
  const module = (image: Rgb8Image) =>
    u.module === 'canny' ? cannyOffThread(image, u.low_threshold, u.high_threshold, signal) : image;
  const resize = (image: Rgb8Image, w: number, h: number) => resizeOffThread(image, w, h, false, signal);
  const mode = u.resize_mode ?? 'just_resize';
  if (u.processor_res === null || u.processor_res === undefined)
    return module(await fitControlImage(picture, width, height, mode, resize));
  const [pw, ph] = processorSize(picture, u.processor_res);
  const atRes = pw === picture.width && ph === picture.height ? picture : await resize(picture, pw, ph);
  return fitControlImage(await module(atRes), width, height, mode, resize);
}

const BASE64 = /^[A-Za-z0-9+/\r\n]*={0,2}$/;

/** A base64 string (or a `data:` URL) as bytes; 400 for anything else. */
export function base64Bytes(value: string, field: string): Uint8Array {
  const comma = value.startsWith('data:') ? value.indexOf(',') : -1;
  const text = value.slice(comma + 1).trim();
  if (text.length === 0 || !BASE64.test(text))
    throw new BadInput(`${field} must be a base64 PNG, JPEG or WebP image`, { code: 'INVALID_IMAGE' });
  return new Uint8Array(Buffer.from(text, 'base64'));
}

/** Decoded RGB pixels of an image (its size checked from its header first); 400 for a non-image or one too large. */
async function decoded(bytes: Uint8Array, field: string, maxPixels: number, signal?: AbortSignal) {
  try {
    return await decodeUpload(bytes, maxPixels, false, signal);
  } catch (err) {
    if (err instanceof UnreadableImage)
      throw new BadInput(`${field} ${err.message}`, {
        code: err.tooLarge ? 'IMAGE_TOO_LARGE' : 'INVALID_IMAGE',
      });
    throw err;
  }
}
