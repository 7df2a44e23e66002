import type { ExampleFile } from '@tiffin/core';
import sharp from 'sharp';
import { encodeImage } from '../encode/encode-image.js';
import { formatForMimeType, SUPPORTED_MIME_TYPES } from '../formats.js';
import { isAllowedMediaType } from '../http/read-image-part.js';
import type { TiffinImage } from '../tiffin-image.js';

/** The picture the API page offers when the API author gave no sample: small, but a real photo-like image. */
const EXAMPLE_SVG = `<svg xmlns="http://www.w3.org/2000/svg" width="64" height="48">
  <defs><linearGradient id="sky" x1="0" y1="0" x2="0" y2="1">
    <stop offset="0" stop-color="#3b82c4"/><stop offset="1" stop-color="#cfe8f7"/>
  </linearGradient></defs>
  <rect width="64" height="48" fill="url(#sky)"/>
  <circle cx="48" cy="13" r="7" fill="#f7d154"/>
  <path d="M0 36 Q16 24 32 34 T64 30 V48 H0 Z" fill="#4f8a3b"/>
</svg>`;

const EXAMPLE_PIXELS = 64 * 48;

/**
 * The example file of an Image input: its `fromSample` sample, else a 64×48 landscape drawn by sharp, encoded
 * as PNG when the input accepts PNG, else in the first type it accepts. None when it accepts no type Tiffin
 * writes, or allows fewer pixels than the picture has.
 */
export function exampleImageFile(
  allowed: readonly string[],
  maxPixels: number,
  sample: TiffinImage | undefined,
): ExampleFile | null {
  const mediaType = ['image/png', ...SUPPORTED_MIME_TYPES].find((m) => isAllowedMediaType(m, allowed));
  const format = mediaType ? formatForMimeType(mediaType) : undefined;
  if (!mediaType || !format) return null;
  if ((sample ? sample.width * sample.height : EXAMPLE_PIXELS) > maxPixels) return null;
  return {
    mediaType,
    fileName: `example.${format.extension}`,
    bytes: async () => encodeImage(sample ?? sharp(Buffer.from(EXAMPLE_SVG)), format.format),
  };
}
