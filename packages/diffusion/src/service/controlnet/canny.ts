import type { Rgb8Image } from '../lanczos-resize.js';

/** A1111's ControlNet extension's Canny thresholds unless a request gives its own (`threshold_a`, `threshold_b`). */
export const CANNY_DEFAULT_LOW = 100;
export const CANNY_DEFAULT_HIGH = 200;

/** The most pixels an edge map is computed for: 4096×4096 (the upload bound), checked before a buffer is made. */
export const CANNY_MAX_PIXELS = 4096 * 4096;

/** OpenCV's `CANNY_SHIFT` and its fixed-point tan(22.5°): the direction test of the non-maximum suppression. */
const CANNY_SHIFT = 15;
/** `(int)(tan(22.5°) · 2^15 + 0.5)`: 13573, as OpenCV rounds it. */
const TG22 = Math.floor((Math.SQRT2 - 1) * (1 << CANNY_SHIFT) + 0.5);

/** Map states, as OpenCV's: 0 a weak candidate, 1 no edge, 2 an edge. */
const WEAK = 0;
const NONE = 1;
const EDGE = 2;

/**
 * Canny edges of an 8-bit RGB picture as OpenCV's `cv2.Canny(rgb, low, high)` computes them (the call A1111's
 * ControlNet extension makes on the RGB picture, no grey conversion): 3×3 Sobel with replicated borders per
 * channel, the channel of largest L1 magnitude `|dx| + |dy|` (the first on a tie), OpenCV's fixed-point
 * non-maximum suppression, and hysteresis over 8 neighbours from pixels above `high`. Thresholds are floored
 * and swapped when `low > high`, as OpenCV does. The answer is a 3-channel 0/255 map of the same size, the
 * picture ControlNet takes (A1111's `HWC3`).
 */
export function cannyEdges(image: Rgb8Image, low = CANNY_DEFAULT_LOW, high = CANNY_DEFAULT_HIGH): Rgb8Image {
  const { width, height, data } = image;
  if (!Number.isInteger(width) || !Number.isInteger(height) || width < 1 || height < 1)
    throw new RangeError(`an edge map needs a picture of at least 1×1 pixels, not ${width}×${height}`);
  if (width * height > CANNY_MAX_PIXELS)
    throw new RangeError(
      `an edge map is computed for at most ${CANNY_MAX_PIXELS} pixels, not ${width}×${height}`,
    );
  if (data.length !== width * height * 3)
    throw new RangeError(
      `an RGB picture of ${width}×${height} has ${width * height * 3} bytes, not ${data.length}`,
    );
  if (!Number.isFinite(low) || !Number.isFinite(high))
    throw new RangeError('Canny thresholds must be finite');
  if (low > high) [low, high] = [high, low];
  const lo = Math.floor(low);
  const hi = Math.floor(high);

  const { mag, dx, dy } = gradients(image);
  const map = suppressNonMaxima(mag, dx, dy, width, height, lo, hi);
  return edgeImage(map, width, height);
}

/**
 * Per pixel the Sobel derivatives of the channel with the largest L1 magnitude, and that magnitude, in a
 * magnitude buffer with a zero border of one pixel (OpenCV reads the rows and columns outside as 0).
 */
function gradients(image: Rgb8Image): { mag: Int32Array; dx: Int16Array; dy: Int16Array } {
  const { width, height, data } = image;
  const stride = width + 2;
  const mag = new Int32Array(stride * (height + 2));
  const dx = new Int16Array(width * height);
  const dy = new Int16Array(width * height);
  for (let y = 0; y < height; y++) {
    const up = Math.max(0, y - 1) * width;
    const row = y * width;
    const down = Math.min(height - 1, y + 1) * width;
    for (let x = 0; x < width; x++) {
      const left = Math.max(0, x - 1);
      const right = Math.min(width - 1, x + 1);
      let best = -1;
      let bestDx = 0;
      let bestDy = 0;
      for (let c = 0; c < 3; c++) {
        const tl = data[3 * (up + left) + c];
        const tc = data[3 * (up + x) + c];
        const tr = data[3 * (up + right) + c];
        const ml = data[3 * (row + left) + c];
        const mr = data[3 * (row + right) + c];
        const bl = data[3 * (down + left) + c];
        const bc = data[3 * (down + x) + c];
        const br = data[3 * (down + right) + c];
        const gx = tr + 2 * mr + br - tl - 2 * ml - bl;
        const gy = bl + 2 * bc + br - tl - 2 * tc - tr;
        const m = Math.abs(gx) + Math.abs(gy);
        if (m > best) {
          best = m;
          bestDx = gx;
          bestDy = gy;
        }
      }
      mag[(y + 1) * stride + x + 1] = best;
      dx[row + x] = bestDx;
      dy[row + x] = bestDy;
    }
  }
  return { mag, dx, dy };
}

/**
 * OpenCV's non-maximum suppression along the gradient's direction (horizontal, vertical or one of the
 * diagonals, chosen by fixed-point tan 22.5° / 67.5°, with its asymmetric `>` / `>=` comparisons), then its
 * hysteresis: candidates above `high` seed edges that grow through 8-connected candidates.
 */
function suppressNonMaxima(
  mag: Int32Array,
  dx: Int16Array,
  dy: Int16Array,
  width: number,
  height: number,
  low: number,
  high: number,
): Uint8Array {
  const stride = width + 2;
  // The map has the magnitude buffer's layout; its border is "no edge", so hysteresis never leaves the picture.
  const map = new Uint8Array(stride * (height + 2)).fill(NONE);
  const stack = new Int32Array(width * height);
  let top = 0;
  for (let y = 0; y < height; y++) {
    const row = (y + 1) * stride + 1;
    for (let x = 0; x < width; x++) {
      const j = row + x;
      const m = mag[j];
      if (m > low && isLocalMaximum(mag, j, stride, m, dx[y * width + x], dy[y * width + x])) {
        if (m > high) {
          map[j] = EDGE;
          stack[top++] = j;
        } else map[j] = WEAK;
      }
    }
  }
  const neighbours = [-stride - 1, -stride, -stride + 1, -1, 1, stride - 1, stride, stride + 1];
  while (top > 0) {
    const j = stack[--top];
    for (const d of neighbours) {
      if (map[j + d] === WEAK) {
        map[j + d] = EDGE;
        stack[top++] = j + d;
      }
    }
  }
  return map;
}

function isLocalMaximum(
  mag: Int32Array,
  j: number,
  stride: number,
  m: number,
  xs: number,
  ys: number,
): boolean {
  const x = Math.abs(xs);
  const y = Math.abs(ys) * (1 << CANNY_SHIFT);
  const tg22x = x * TG22;
  if (y < tg22x) return m > mag[j - 1] && m >= mag[j + 1];
  const tg67x = tg22x + x * (1 << (CANNY_SHIFT + 1));
  if (y > tg67x) return m > mag[j - stride] && m >= mag[j + stride];
  const s = (xs ^ ys) < 0 ? -1 : 1;
  return m > mag[j - stride - s] && m > mag[j + stride + s];
}

/** The map's edges as a 3-channel 0/255 picture (its border dropped). */
function edgeImage(map: Uint8Array, width: number, height: number): Rgb8Image {
  const stride = width + 2;
  const data = new Uint8Array(width * height * 3);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      if (map[(y + 1) * stride + x + 1] !== EDGE) continue;
      const i = 3 * (y * width + x);
      data[i] = 255;
      data[i + 1] = 255;
      data[i + 2] = 255;
    }
  }
  return { width, height, data };
}
