import { NDArray } from '@tiffin/core';
import { roundToFloat16 } from '@tiffin/core/descriptor';
import { TiffinImage } from '../tiffin-image.js';

/** Axis order of an image tensor: channels first (PyTorch, ONNX exports) or last (TensorFlow). */
export type TensorLayout = 'nchw' | 'nhwc';

/** Element types an image tensor can be built in. */
export type ImageTensorDType = 'float32' | 'float16' | 'float64' | 'uint8' | 'int32';

/** Channel order of the tensor: `BGR` for models trained on OpenCV-decoded images. */
export type TensorChannels = 'RGB' | 'BGR' | 'L';

export interface ImageTensorOptions {
  /** Resize every image to this size first (pixels); without it, images keep their size and must all match. */
  size?: { width: number; height: number };
  /** How a resize keeps the aspect ratio: `fill` stretches, `cover` crops the centre, `contain` pads. Default `fill`. */
  fit?: 'fill' | 'cover' | 'contain';
  /** Padding colour for `fit: 'contain'`, 0–255 per RGB channel. Default black. */
  background?: readonly [number, number, number];
  /** Default `nchw`. */
  layout?: TensorLayout;
  /** Default `RGB`. Alpha is dropped; palette and grey images are expanded. */
  channels?: TensorChannels;
  /** Default `float32`. Integer dtypes round and clamp to the type's range. */
  dtype?: ImageTensorDType;
  /** Each 0–255 value is multiplied by this first. Default 1/255 for float dtypes, 1 for integer ones. */
  scale?: number;
  /** Subtracted per channel (in the tensor's channel order) after scaling; one number applies to all. Default 0. */
  mean?: number | readonly number[];
  /** Divides per channel after the mean is subtracted; one number applies to all. Default 1. */
  std?: number | readonly number[];
}

const CHANNEL_COUNT: Record<TensorChannels, number> = { RGB: 3, BGR: 3, L: 1 };

function perChannel(
  name: string,
  value: number | readonly number[] | undefined,
  fallback: number,
  channels: number,
) {
  if (value === undefined) return new Array<number>(channels).fill(fallback);
  const values = typeof value === 'number' ? new Array<number>(channels).fill(value) : [...value];
  if (values.length !== channels) {
    throw new RangeError(
      `imageToTensor: ${name} needs ${channels} values (one per channel), got ${values.length}`,
    );
  }
  if (values.some((v) => !Number.isFinite(v)))
    throw new RangeError(`imageToTensor: ${name} must be finite numbers`);
  return values;
}

function checkSize(size: { width: number; height: number }): void {
  for (const side of [size.width, size.height]) {
    if (!Number.isInteger(side) || side < 1 || side > 16_384) {
      throw new RangeError(
        `imageToTensor: size must be whole pixels from 1 to 16384, got ${size.width}x${size.height}`,
      );
    }
  }
}

/** The image as 8-bit pixels in the wanted channel order, at the wanted size. */
async function prepare(image: TiffinImage, options: ImageTensorOptions, grey: boolean): Promise<TiffinImage> {
  let pixels = image.convert(grey ? 'L' : 'RGB');
  const size = options.size;
  if (size && (size.width !== pixels.width || size.height !== pixels.height)) {
    const [r, g, b] = options.background ?? [0, 0, 0];
    const fit = options.fit === 'cover' ? 'cover' : options.fit === 'contain' ? 'contain' : 'fill';
    const resized = pixels.toSharp().resize(size.width, size.height, { fit, background: { r, g, b } });
    pixels = await TiffinImage.fromSharp(resized, grey ? 'L' : 'RGB');
  }
  return pixels;
}

/**
 * Images → one input tensor `[n, c, h, w]` (`nchw`) or `[n, h, w, c]` (`nhwc`): resized, in the model's channel
 * order, scaled and normalised per channel (`(value × scale − mean) / std`), in the model's dtype. Sizes come
 * from the developer, so a client's image is only ever resized down or up to them; decode limits bound the input.
 */
export async function imagesToTensor(
  images: readonly TiffinImage[],
  options: ImageTensorOptions = {},
): Promise<NDArray> {
  if (images.length === 0) throw new RangeError('imageToTensor: no images');
  if (options.size) checkSize(options.size);
  const channelOrder = options.channels ?? 'RGB';
  const channels = CHANNEL_COUNT[channelOrder];
  const dtype = options.dtype ?? 'float32';
  const isFloat = dtype.startsWith('float');
  const scale = options.scale ?? (isFloat ? 1 / 255 : 1);
  const mean = perChannel('mean', options.mean, 0, channels);
  const std = perChannel('std', options.std, 1, channels);
  if (std.some((s) => s === 0)) throw new RangeError('imageToTensor: std must not be 0');
  const layout = options.layout ?? 'nchw';

  const prepared = await Promise.all(images.map((image) => prepare(image, options, channels === 1)));
  const { width, height } = prepared[0]!;
  const mismatch = prepared.find((p) => p.width !== width || p.height !== height);
  if (mismatch) {
    throw new RangeError(
      `imageToTensor: images of different sizes (${width}x${height}, ${mismatch.width}x${mismatch.height}) need a size option`,
    );
  }
  const plane = width * height;
  const out = allocate(dtype, images.length * channels * plane);
  const convert = converterFor(dtype);
  // Source channel s feeds tensor channel c: BGR reads R, G, B backwards.
  const source = channelOrder === 'BGR' ? [2, 1, 0] : channelOrder === 'RGB' ? [0, 1, 2] : [0];
  prepared.forEach((p, n) => {
    const pixels = p.data as Uint8Array;
    const base = n * channels * plane;
    for (let c = 0; c < channels; c++) {
      const s = source[c]!;
      const m = mean[c]!;
      const d = std[c]!;
      for (let i = 0; i < plane; i++) {
        const value = (pixels[i * channels + s]! * scale - m) / d;
        out[layout === 'nchw' ? base + c * plane + i : base + i * channels + c] = convert(value);
      }
    }
  });
  const shape =
    layout === 'nchw' ? [images.length, channels, height, width] : [images.length, height, width, channels];
  return new NDArray(out, shape, dtype);
}

/** One image → a tensor with a batch dimension of 1 (see `imagesToTensor`). */
export function imageToTensor(image: TiffinImage, options: ImageTensorOptions = {}): Promise<NDArray> {
  return imagesToTensor([image], options);
}

function allocate(
  dtype: ImageTensorDType,
  size: number,
): Float32Array | Float64Array | Uint8Array | Int32Array {
  if (dtype === 'float64') return new Float64Array(size);
  if (dtype === 'uint8') return new Uint8Array(size);
  if (dtype === 'int32') return new Int32Array(size);
  return new Float32Array(size);
}

/** The dtype's rounding of one value (float16 storage is float32 holding float16-exact values). */
function converterFor(dtype: ImageTensorDType): (v: number) => number {
  if (dtype === 'float16') return roundToFloat16;
  if (dtype === 'uint8') return (v) => clamp(Math.round(v), 0, 255);
  if (dtype === 'int32') return (v) => clamp(Math.round(v), -(2 ** 31), 2 ** 31 - 1);
  return (v) => v;
}

const clamp = (v: number, lo: number, hi: number): number => Math.min(Math.max(v, lo), hi);
