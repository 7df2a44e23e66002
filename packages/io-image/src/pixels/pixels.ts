import { MODE_INFO, type PilMode } from '../modes.js';

/** Storage of a mode's pixels: bool ('1') as 0/1 bytes, 'I' as int32, 'F' as float32, others as bytes. */
export type PixelData = Uint8Array | Int32Array | Float32Array;

/** Decoded pixels, row-major, channels interleaved. */
export interface Pixels {
  readonly width: number;
  readonly height: number;
  readonly mode: PilMode;
  readonly data: PixelData;
  /** For mode 'P': the palette, 3 bytes (R, G, B) per index. */
  readonly palette?: Uint8Array;
}

/** Check that `data` has the length and element type `mode` needs for a width×height image. */
export function assertPixelLayout(width: number, height: number, mode: PilMode, data: PixelData): void {
  const info = MODE_INFO[mode];
  const expected = width * height * info.channels;
  if (data.length !== expected) {
    throw new RangeError(
      `Mode ${mode} needs ${expected} values for ${width}x${height} pixels, got ${data.length}`,
    );
  }
  const ok =
    info.dtype === 'int32'
      ? data instanceof Int32Array
      : info.dtype === 'float32'
        ? data instanceof Float32Array
        : data instanceof Uint8Array;
  if (!ok) throw new TypeError(`Mode ${mode} stores its pixels as ${info.dtype}`);
}
