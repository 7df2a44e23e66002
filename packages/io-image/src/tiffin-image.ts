import { BadInput, NDArray } from '@tiffin/core';
import sharp, { type Sharp } from 'sharp';
import { MODE_INFO, type PilMode, type PixelDType } from './modes.js';
import { snapshotPipeline } from './pipeline/snapshot.js';
import { fromRgb, toSharpRaw } from './pixels/convert.js';
import { assertPixelLayout, type PixelData, type Pixels } from './pixels/pixels.js';

/**
 * A decoded image as an API function receives it: its pixels in one mode (`pixels` is an NDArray of
 * H×W for single-channel modes, H×W×C otherwise; uint8, or bool for '1', int32 for 'I', float32 for 'F'),
 * and a sharp pipeline (`toSharp()`) for further work. An API function may return one as well.
 */
export class TiffinImage {
  readonly width: number;
  readonly height: number;
  readonly mode: PilMode;
  /** Row-major, channels interleaved; the storage `pixels` wraps without copying. */
  readonly data: PixelData;
  /** For mode 'P': the palette, 3 bytes (R, G, B) per index. */
  readonly palette: Uint8Array | undefined;
  /** The MIME type the image was decoded from (sniffed from its content), if it came from bytes. */
  readonly sourceMimeType: string | undefined;
  private ndarray: NDArray | undefined;

  constructor(pixels: Pixels, sourceMimeType?: string) {
    assertPixelLayout(pixels.width, pixels.height, pixels.mode, pixels.data);
    this.width = pixels.width;
    this.height = pixels.height;
    this.mode = pixels.mode;
    this.data = pixels.data;
    this.palette = pixels.palette;
    this.sourceMimeType = sourceMimeType;
  }

  /** Channels per pixel in this mode. */
  get channels(): number {
    return MODE_INFO[this.mode].channels;
  }

  get dtype(): PixelDType {
    return MODE_INFO[this.mode].dtype;
  }

  /** `[height, width]` for single-channel modes, else `[height, width, channels]`. */
  get shape(): number[] {
    return this.channels === 1 ? [this.height, this.width] : [this.height, this.width, this.channels];
  }

  /** The pixels as an NDArray (shares storage with `data`). */
  get pixels(): NDArray {
    this.ndarray ??= new NDArray(this.data, this.shape, this.dtype);
    return this.ndarray;
  }

  /** A fresh sharp pipeline reading these pixels (see `toSharpRaw` for how each mode is presented). */
  toSharp(): Sharp {
    const { data, channels } = toSharpRaw(this);
    const pipeline = sharp(data, { raw: { width: this.width, height: this.height, channels } });
    // Grey stays grey in the encoded file (sharp would otherwise write 1-2 channel input as sRGB).
    return channels <= 2 ? pipeline.toColourspace('b-w') : pipeline;
  }

  /** This image in another mode (through 8-bit RGB/RGBA, with the same formulas as decoding). */
  convert(mode: PilMode): TiffinImage {
    if (mode === this.mode) return this;
    const { data, channels } = this.toRgb();
    return new TiffinImage(fromRgb(data, channels, this.width, this.height, mode), this.sourceMimeType);
  }

  /** Interleaved 8-bit RGB, or RGBA when the mode has alpha. */
  toRgb(): { data: Uint8Array; channels: 3 | 4 } {
    const raw = toSharpRaw(this);
    if (raw.channels >= 3) return raw as { data: Uint8Array; channels: 3 | 4 };
    const n = this.width * this.height;
    const hasAlpha = raw.channels === 2;
    const out = new Uint8Array(n * (hasAlpha ? 4 : 3));
    const step = hasAlpha ? 4 : 3;
    for (let i = 0; i < n; i++) {
      const v = raw.data[i * raw.channels]!;
      out[i * step] = v;
      out[i * step + 1] = v;
      out[i * step + 2] = v;
      if (hasAlpha) out[i * step + 3] = raw.data[i * 2 + 1]!;
    }
    return { data: out, channels: hasAlpha ? 4 : 3 };
  }

  /**
   * An image from a pixel array: H×W or H×W×C. With `mode` the shape must fit it ('RGB' H×W×3, 'RGBA'
   * H×W×4, 'L'/'1'/'P'/'I'/'F' H×W or H×W×1, 'LA' H×W×2, 'CMYK' H×W×4); with null the mode follows the
   * shape and dtype (H×W: bool → '1', int → 'I' when values leave 0..255, float32/float64 → 'F' when not
   * integral, else 'L'; C = 1, 2, 3, 4 → 'L', 'LA', 'RGB', 'RGBA'). Values are converted to the mode's
   * element type (uint8 modes clamp and round).
   */
  static fromNDArray(array: NDArray, mode: PilMode | null = null): TiffinImage {
    const shape = array.shape;
    if (shape.length !== 2 && shape.length !== 3) {
      throw new BadInput(`Image: a pixel array must be HxW or HxWxC, got shape (${shape.join(', ')})`);
    }
    const [height, width] = shape as [number, number];
    const c = shape.length === 3 ? shape[2]! : 1;
    const values = numericValues(array);
    const target = mode ?? inferMode(array.dtype, c, values);
    const info = MODE_INFO[target];
    if (c !== info.channels) {
      throw new BadInput(
        `Image: mode ${target} needs a pixel array of shape ${info.channels === 1 ? '(H, W)' : `(H, W, ${info.channels})`}, got (${shape.join(', ')})`,
      );
    }
    const n = values.length;
    let data: PixelData;
    if (info.dtype === 'int32') data = Int32Array.from(values, (v) => Math.round(v));
    else if (info.dtype === 'float32') data = Float32Array.from(values);
    else if (info.dtype === 'bool') data = Uint8Array.from(values, (v) => (v ? 1 : 0));
    else {
      data = new Uint8Array(n);
      for (let i = 0; i < n; i++) {
        const v = values[i]!;
        data[i] = v <= 0 ? 0 : v >= 255 ? 255 : Math.round(v);
      }
    }
    return new TiffinImage({ width, height, mode: target, data });
  }

  /** Run a sharp pipeline to raw pixels and wrap them (mode null keeps RGB/RGBA/L/LA as it comes). */
  static async fromSharp(pipeline: Sharp, mode: PilMode | null = null): Promise<TiffinImage> {
    const { data, info } = await snapshotPipeline(pipeline)
      .raw({ depth: 'uchar' })
      .toBuffer({ resolveWithObject: true });
    const bytes = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
    const nativeMode: PilMode = (['L', 'LA', 'RGB', 'RGBA'] as const)[info.channels - 1] ?? 'RGBA';
    const image = new TiffinImage({ width: info.width, height: info.height, mode: nativeMode, data: bytes });
    return mode === null ? image : image.convert(mode);
  }
}

/** The array's values as numbers (bigint → number, bool → 0/1); str/object arrays are refused. */
function numericValues(array: NDArray): ArrayLike<number> {
  const data = array.data as unknown;
  if (data instanceof BigInt64Array || data instanceof BigUint64Array) return Array.from(data, Number);
  if (ArrayBuffer.isView(data)) return data as unknown as ArrayLike<number>;
  throw new BadInput(`Image: a pixel array must be numeric, got dtype ${array.dtype}`);
}

function inferMode(dtype: string, channels: number, values: ArrayLike<number>): PilMode {
  if (channels !== 1) {
    const mode = (['L', 'LA', 'RGB', 'RGBA'] as const)[channels - 1];
    if (!mode) throw new BadInput(`Image: cannot infer an image mode for ${channels} channels`);
    return mode;
  }
  if (dtype === 'bool') return '1';
  if (dtype === 'uint8') return 'L';
  let integral = true;
  let inByteRange = true;
  for (let i = 0; i < values.length; i++) {
    const v = values[i]!;
    if (!Number.isInteger(v)) integral = false;
    if (v < 0 || v > 255) inByteRange = false;
  }
  if (!integral) return 'F';
  return inByteRange ? 'L' : 'I';
}
