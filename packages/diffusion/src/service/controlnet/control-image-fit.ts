import type { Rgb8Image } from '../lanczos-resize.js';
import type { ResizeMode } from './controlnet-schema.js';

/** A resize of 8-bit RGB to a size (the service passes its off-thread Pillow-exact Lanczos). */
export type Resize = (image: Rgb8Image, width: number, height: number) => Promise<Rgb8Image>;

/** numpy's `np.round` on a non-negative value: half to even. */
function roundHalfEven(x: number): number {
  const floor = Math.floor(x);
  const diff = x - floor;
  if (diff > 0.5) return floor + 1;
  if (diff < 0.5) return floor;
  return floor % 2 === 0 ? floor : floor + 1;
}

/** The picture scaled by `k` on both sides, each side rounded (at least 1 pixel). */
function scaledSize(image: Rgb8Image, k: number): [number, number] {
  return [Math.max(1, roundHalfEven(image.width * k)), Math.max(1, roundHalfEven(image.height * k))];
}

/**
 * The per-channel median of the picture's border (top row, bottom row, left column, right column, corners counted
 * twice), truncated to an integer: the colour "Resize and Fill" pads with.
 */
export function borderMedian(image: Rgb8Image): [number, number, number] {
  const { width: w, height: h, data } = image;
  const at = (x: number, y: number, c: number) => data[(y * w + x) * 3 + c];
  return [0, 1, 2].map((c) => {
    const values: number[] = [];
    for (let x = 0; x < w; x++) values.push(at(x, 0, c), at(x, h - 1, c));
    for (let y = 0; y < h; y++) values.push(at(0, y, c), at(w - 1, y, c));
    values.sort((a, b) => a - b);
    const mid = values.length >> 1;
    const median = values.length % 2 === 1 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
    return Math.trunc(median);
  }) as [number, number, number];
}

/**
 * The picture brought to `width`×`height` as A1111's ControlNet extension brings a control map to the generation's
 * size (docs/a1111-api.md, ControlNet): `just_resize` stretches it; `crop_and_resize` scales it by the larger of the
 * two side ratios (sides rounded half to even), then keeps the middle (offsets rounded down); `resize_and_fill`
 * scales it by the smaller ratio and centres it on the border's median colour. The resampling is `resize` (the
 * service's Lanczos) where the extension picks among OpenCV's filters by content.
 */
export async function fitControlImage(
  image: Rgb8Image,
  width: number,
  height: number,
  mode: ResizeMode,
  resize: Resize,
): Promise<Rgb8Image> {
  if (image.width === width && image.height === height) return image;
  if (mode === 'just_resize') return resize(image, width, height);
  const kx = width / image.width;
  const ky = height / image.height;
  const fill = mode === 'resize_and_fill';
  const [sw, sh] = scaledSize(image, fill ? Math.min(kx, ky) : Math.max(kx, ky));
  const scaled = sw === image.width && sh === image.height ? image : await resize(image, sw, sh);
  const out = new Uint8Array(width * height * 3);
  if (fill) {
    const colour = borderMedian(image);
    for (let p = 0; p < width * height; p++) out.set(colour, p * 3);
    const top = Math.max(0, (height - sh) >> 1);
    const left = Math.max(0, (width - sw) >> 1);
    for (let y = 0; y < Math.min(sh, height - top); y++) {
      const row = scaled.data.subarray(y * sw * 3, (y * sw + Math.min(sw, width - left)) * 3);
      out.set(row, ((top + y) * width + left) * 3);
    }
  } else {
    const top = Math.max(0, (sh - height) >> 1);
    const left = Math.max(0, (sw - width) >> 1);
    for (let y = 0; y < height; y++) {
      const from = ((top + y) * sw + left) * 3;
      out.set(scaled.data.subarray(from, from + width * 3), y * width * 3);
    }
  }
  return { width, height, data: out };
}

/**
 * The size the module runs at for `processor_res` (A1111's): the picture scaled so its short side is `res`, sides
 * rounded half to even.
 */
export function processorSize(image: Rgb8Image, res: number): [number, number] {
  return scaledSize(image, res / Math.min(image.width, image.height));
}
