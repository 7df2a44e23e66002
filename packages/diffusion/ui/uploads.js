// @ts-check
// Uploads for image to image and inpainting, resized in the browser to the size the form asks (by default the
// model's own pixel count, the picture's aspect kept, sides multiples of 8), so a photo is sent at a size the
// model serves instead of being refused or sent whole.
import { SIZE_STEP } from './form.js';

/**
 * The size an upload is generated at: its own when it holds no more pixels than the model's default size,
 * else scaled down to about that many, its aspect kept; never past the largest side; sides multiples of 8.
 * @param {number} width
 * @param {number} height
 * @param {{ width?: number, height?: number, max_size?: number }} defaults
 * @returns {{ width: number, height: number }}
 */
export function fittedSize(width, height, defaults) {
  const area = (defaults.width ?? 512) * (defaults.height ?? 512);
  const most = defaults.max_size ?? Number.POSITIVE_INFINITY;
  const scale = Math.min(1, Math.sqrt(area / (width * height)), most / Math.max(width, height));
  /** @param {number} side */
  const snap = (side) => Math.max(SIZE_STEP, Math.floor((side * scale) / SIZE_STEP) * SIZE_STEP);
  return { width: Math.min(snap(width), most), height: Math.min(snap(height), most) };
}

/**
 * A picture (or canvas) drawn at exactly this size, as a PNG, on a `fill` background where given.
 * @param {CanvasImageSource} source
 * @param {number} width
 * @param {number} height
 * @param {string} [fill]
 * @returns {Promise<Blob>}
 */
export function pngAt(source, width, height, fill) {
  const out = document.createElement('canvas');
  out.width = width;
  out.height = height;
  const ctx = /** @type {CanvasRenderingContext2D} */ (out.getContext('2d'));
  ctx.imageSmoothingQuality = 'high';
  if (fill) {
    ctx.fillStyle = fill;
    ctx.fillRect(0, 0, width, height);
  }
  ctx.drawImage(source, 0, 0, width, height);
  return new Promise((resolve, reject) =>
    out.toBlob((blob) => (blob ? resolve(blob) : reject(new Error('could not draw the image'))), 'image/png'),
  );
}
