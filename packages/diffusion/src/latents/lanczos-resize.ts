/** An 8-bit RGB image, row-major HWC. */
export interface Rgb8Image {
  width: number;
  height: number;
  data: Uint8Array;
}

/** Pillow's fixed-point precision for 8-bit resampling (32 bits − 8 value bits − 2 guard bits). */
const PRECISION_BITS = 22;
const LANCZOS_SUPPORT = 3;

function sinc(x: number): number {
  if (x === 0) return 1;
  const px = Math.PI * x;
  return Math.sin(px) / px;
}

function lanczos(x: number): number {
  return x >= -LANCZOS_SUPPORT && x < LANCZOS_SUPPORT ? sinc(x) * sinc(x / LANCZOS_SUPPORT) : 0;
}

/** For each output pixel: the first input pixel it reads, how many, and their fixed-point weights. */
interface Coefficients {
  first: Int32Array;
  count: Int32Array;
  /** `ksize` weights per output pixel. */
  weights: Int32Array;
  ksize: number;
}

/**
 * Pillow's `precompute_coeffs` + `normalize_coeffs_8bpc`: when shrinking, the kernel widens by the
 * scale (an anti-aliasing low-pass), weights are normalised to sum 1 and then rounded to 22-bit
 * fixed point, so results match `PIL.Image.resize(..., LANCZOS)` byte for byte.
 */
function coefficients(inSize: number, outSize: number): Coefficients {
  const scale = inSize / outSize;
  const filterScale = Math.max(scale, 1);
  const support = LANCZOS_SUPPORT * filterScale;
  const inverse = 1 / filterScale;
  const ksize = Math.ceil(support) * 2 + 1;
  const first = new Int32Array(outSize);
  const count = new Int32Array(outSize);
  const weights = new Int32Array(outSize * ksize);
  const row = new Float64Array(ksize);
  for (let xx = 0; xx < outSize; xx++) {
    const center = (xx + 0.5) * scale;
    // C's (int) cast truncates toward zero.
    const xmin = Math.max(Math.trunc(center - support + 0.5), 0);
    const xmax = Math.min(Math.trunc(center + support + 0.5), inSize) - xmin;
    let total = 0;
    for (let x = 0; x < xmax; x++) {
      row[x] = lanczos((x + xmin - center + 0.5) * inverse);
      total += row[x];
    }
    for (let x = 0; x < xmax; x++) {
      const w = total !== 0 ? row[x] / total : row[x];
      weights[xx * ksize + x] = Math.trunc(w * (1 << PRECISION_BITS) + (w < 0 ? -0.5 : 0.5));
    }
    first[xx] = xmin;
    count[xx] = xmax;
  }
  return { first, count, weights, ksize };
}

function clip8(sum: number): number {
  const v = Math.floor(sum / (1 << PRECISION_BITS));
  return Math.max(0, Math.min(v, 255));
}

/** One separable pass along rows (`horizontal`) or columns, 3 channels. */
function pass(src: Rgb8Image, width: number, height: number, horizontal: boolean): Rgb8Image {
  const { first, count, weights, ksize } = horizontal
    ? coefficients(src.width, width)
    : coefficients(src.height, height);
  const out = new Uint8Array(width * height * 3);
  const half = 1 << (PRECISION_BITS - 1);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const o = horizontal ? x : y;
      const start = first[o];
      const n = count[o];
      for (let c = 0; c < 3; c++) {
        let sum = half;
        for (let k = 0; k < n; k++) {
          const i = horizontal ? (y * src.width + start + k) * 3 + c : ((start + k) * src.width + x) * 3 + c;
          sum += src.data[i] * weights[o * ksize + k];
        }
        out[(y * width + x) * 3 + c] = clip8(sum);
      }
    }
  }
  return { width, height, data: out };
}

/**
 * Lanczos (a = 3) resize of an 8-bit RGB image, as Pillow's `Image.resize(size, Image.LANCZOS)` does
 * it: horizontal pass first, then vertical, each skipped when that side keeps its size.
 */
export function resizeLanczos(image: Rgb8Image, width: number, height: number): Rgb8Image {
  if (!Number.isInteger(width) || !Number.isInteger(height) || width < 1 || height < 1)
    throw new Error(`cannot resize to ${width}×${height}`);
  let current = image;
  if (width !== current.width) current = pass(current, width, current.height, true);
  if (height !== current.height) current = pass(current, width, height, false);
  return current === image ? { width, height, data: image.data.slice() } : current;
}
