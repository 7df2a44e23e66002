import { VAE_GRID } from '../kinds/images.js';

/**
 * The size an upload of `width`×`height` is generated at: fitted into `maxSize` (its aspect kept) on multiples of
 * 8, as the kinds fit an upload (`rgbInput`), so a compat layer knows the answer's size before the run ends.
 */
export function fittedSize(
  width: number,
  height: number,
  maxSize: number,
): { width: number; height: number } {
  const fit = Math.min(1, maxSize / Math.max(width, height));
  const side = (s: number) => {
    const scaled = Math.min(maxSize, Math.round(s * fit));
    return Math.max(VAE_GRID, scaled - (scaled % VAE_GRID));
  };
  return { width: side(width), height: side(height) };
}
