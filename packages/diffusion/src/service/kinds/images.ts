import { BadInput } from '@tiffin/core';
import { siblingModule, TaskPool } from '@tiffin/core/descriptor';
import type { Rgb8Image } from '../lanczos-resize.js';
import type { GenerationLimits } from '../request-schemas.js';
import type { JobImage, JobInput } from '../worker-protocol.js';

/** Uploaded images are resized to multiples of this (the SD VAE's scale factor). */
export const VAE_GRID = 8;

/** What an uploaded image part decodes to, as far as the kinds need it. */
interface DecodedImage {
  width: number;
  height: number;
  channels: number;
  data: unknown;
}

/**
 * The most pixels an uploaded image may have, read from its header before a pixel is decoded (413 over it):
 * 4096×4096 (a phone photo), or the model's own largest size where that is more. An upload over the side the
 * model serves is resized down to it (`rgbInput`), not refused.
 */
export const UPLOAD_MAX_PIXELS = 4096 * 4096;

/** The header bound of an upload to a service with these limits (see {@link UPLOAD_MAX_PIXELS}). */
export function uploadMaxPixels(limits: GenerationLimits): number {
  return Math.max(limits.maxSize * limits.maxSize, UPLOAD_MAX_PIXELS);
}

/** A side scaled by `fit` and rounded down to a multiple of 8, never past `most`. */
function fittedSide(side: number, fit: number, most: number): number {
  const scaled = Math.min(most, Math.round(side * fit));
  return scaled - (scaled % VAE_GRID);
}

let pool: TaskPool | undefined;

/** The upload threads (`resize-thread.ts`): decoding, resizing and Canny maps of uploads, off the event loop. */
export function uploadThreads(): TaskPool {
  pool ??= new TaskPool({ name: 'upload resizing', module: siblingModule(import.meta.url, 'resize-thread') });
  return pool;
}

/**
 * The buffer of `data` to move into a thread rather than copy, when it is the whole of a buffer of its own. A
 * buffer Node cannot move (sharp's pixels are external memory) is copied by `postMessage` whatever the list says.
 */
export function movable(data: Uint8Array): ArrayBuffer[] {
  const { buffer } = data;
  return buffer instanceof ArrayBuffer && data.byteOffset === 0 && data.byteLength === buffer.byteLength
    ? [buffer]
    : [];
}

/**
 * Pillow's Lanczos resize (`resizeLanczos`) in core's task threads, not on the event loop: a 4096×4096 upload
 * takes about 2 s of it, which would hold every other request (health checks, progress, other uploads) that long.
 * With `transfer`, the input's pixels are moved into the thread (the caller's copy is emptied), not copied: a
 * 50 MB copy holds the loop for tens of milliseconds.
 */
export function resizeOffThread(
  image: Rgb8Image,
  width: number,
  height: number,
  transfer = false,
  /** The request's: a resize still waiting for a thread when it aborts is dropped (`TaskPool.run`). */
  signal?: AbortSignal,
): Promise<Rgb8Image> {
  const moved = transfer ? movable(image.data) : [];
  return uploadThreads().run<Rgb8Image>('resizeLanczos', [image, width, height], moved, signal);
}

/** A ControlNet unit's Canny map (`cannyEdges`) in the same threads, for the same reason. */
export function cannyOffThread(
  image: Rgb8Image,
  low: number,
  high: number,
  signal?: AbortSignal,
): Promise<Rgb8Image> {
  return uploadThreads().run<Rgb8Image>('cannyEdges', [image, low, high], [], signal);
}

/**
 * An uploaded image as RGB uint8 with sides that are multiples of 8 (SD's VAE scale factor) and no longer
 * than the served `maxSize` (a larger upload is scaled down to fit, its aspect kept), by a Lanczos resize of
 * the whole picture, as diffusers' `VaeImageProcessor` does (it resizes with PIL's LANCZOS; `resizeLanczos`
 * matches it byte for byte), not by cropping. The resize runs off the event loop (`resizeOffThread`); an image
 * already of its size is copied as it is. With `transfer` (the caller has no more use for `img`), its pixels are
 * moved into the resizing thread rather than copied.
 */
export async function rgbInput(
  field: string,
  img: DecodedImage,
  limits: GenerationLimits,
  { transfer = false, signal }: { transfer?: boolean; signal?: AbortSignal | undefined } = {},
): Promise<JobImage> {
  const fit = Math.min(1, limits.maxSize / Math.max(img.width, img.height));
  const width = fittedSide(img.width, fit, limits.maxSize);
  const height = fittedSide(img.height, fit, limits.maxSize);
  if (width === 0 || height === 0)
    throw new BadInput(
      `${field} is ${img.width}×${img.height}; both sides must be at least ${VAE_GRID} pixels` +
        (fit < 1 ? ` once fitted into ${limits.maxSize}×${limits.maxSize}` : ''),
    );
  if (!(img.data instanceof Uint8Array) || img.channels !== 3)
    throw new BadInput(`${field} must decode to 8-bit RGB`);
  if (width === img.width && height === img.height) return { width, height, data: img.data.slice() };
  const pixels = { width: img.width, height: img.height, data: img.data };
  return resizeOffThread(pixels, width, height, transfer, signal);
}

/** A job's image of one role, which its kind guarantees is there. */
export function jobImage(input: JobInput, role: 'image' | 'mask'): JobImage {
  const image = input[role];
  if (!image) throw new BadInput(`a ${input.kind} job needs its ${role}`);
  return image;
}
