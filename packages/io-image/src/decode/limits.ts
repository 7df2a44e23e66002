import { PayloadTooLarge } from '@tiffin/core';

/**
 * Default pixel limit: 89,478,485 pixels (about 9459×9459; 256 MiB of RGB), the threshold the reference's
 * imaging library warns at for decompression bombs.
 */
export const DEFAULT_MAX_PIXELS = 89_478_485;

/** Refuse an image whose header announces more than `maxPixels` pixels, before any pixel is decoded. */
export function assertWithinPixelLimit(width: number, height: number, maxPixels: number): void {
  const pixels = width * height;
  if (pixels > maxPixels) {
    throw new PayloadTooLarge(
      `Image is ${width}x${height} (${pixels} pixels), over the limit of ${maxPixels} pixels (option maxPixels)`,
    );
  }
}
