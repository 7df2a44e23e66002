import { BadInput } from '@tiffin/core';
import { resizeLanczos } from '../lanczos-resize.js';
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
 * An uploaded image as RGB uint8 within the size bound, with sides rounded down to multiples of 8
 * (SD's VAE scale factor) by a Lanczos resize of the whole picture, as diffusers' `VaeImageProcessor`
 * does (it resizes with PIL's LANCZOS; `resizeLanczos` matches it byte for byte), not by cropping.
 */
export function rgbInput(field: string, img: DecodedImage, limits: GenerationLimits): JobImage {
  if (img.width > limits.maxSize || img.height > limits.maxSize) {
    throw new BadInput(
      `${field} is ${img.width}×${img.height}; the largest accepted side is ${limits.maxSize} pixels`,
    );
  }
  const width = img.width - (img.width % VAE_GRID);
  const height = img.height - (img.height % VAE_GRID);
  if (width === 0 || height === 0)
    throw new BadInput(
      `${field} is ${img.width}×${img.height}; both sides must be at least ${VAE_GRID} pixels`,
    );
  if (!(img.data instanceof Uint8Array) || img.channels !== 3)
    throw new BadInput(`${field} must decode to 8-bit RGB`);
  return resizeLanczos({ width: img.width, height: img.height, data: img.data }, width, height);
}

/** A job's image of one role, which its kind guarantees is there. */
export function jobImage(input: JobInput, role: 'image' | 'mask'): JobImage {
  const image = input[role];
  if (!image) throw new BadInput(`a ${input.kind} job needs its ${role}`);
  return image;
}
