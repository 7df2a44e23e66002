import { decode as decodeBmpFile, encode as encodeBmpFile } from 'bmp-ts';

/*
 * BMP through the `bmp-ts` codec (sharp/libvips can neither read nor write BMP). bmp-ts reads 1/4/8/16/24/32-bit
 * files, palettes, RLE and top-down rows; it writes 24-bit BI_RGB files. Pixel buffers handed to it are
 * ABGR (4 bytes per pixel).
 */

export interface BmpHeader {
  readonly width: number;
  readonly height: number;
  readonly bitsPerPixel: number;
}

/** Read the dimensions from the file and info headers only, without touching the pixel data. */
export function readBmpHeader(bytes: Uint8Array): BmpHeader {
  if (bytes.length < 26 || bytes[0] !== 0x42 || bytes[1] !== 0x4d) throw new Error('not a BMP file');
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const infoSize = view.getUint32(14, true);
  if (infoSize === 12) {
    // BITMAPCOREHEADER: 16-bit dimensions.
    return {
      width: view.getUint16(18, true),
      height: view.getUint16(20, true),
      bitsPerPixel: view.getUint16(24, true),
    };
  }
  if (bytes.length < 30) throw new Error('truncated BMP header');
  return {
    width: Math.abs(view.getInt32(18, true)),
    height: Math.abs(view.getInt32(22, true)),
    bitsPerPixel: view.getUint16(28, true),
  };
}

export interface DecodedBmp {
  readonly width: number;
  readonly height: number;
  /** 3 = RGB, 4 = RGBA (32-bit files whose alpha channel carries information). */
  readonly channels: 3 | 4;
  readonly data: Uint8Array;
}

/** Decode a BMP file to interleaved 8-bit RGB or RGBA. Call `readBmpHeader` first to bound the size. */
export function decodeBmp(bytes: Uint8Array): DecodedBmp {
  const decoded = decodeBmpFile(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), {
    toRGBA: true,
  });
  const { width, height } = decoded;
  const rgba = decoded.data;
  const n = width * height;
  if (rgba.length < n * 4) throw new Error('truncated BMP pixel data');
  // Only 32-bit files can carry alpha; one whose fourth byte is all 0 or all 255 is plain RGB.
  let alphaMatters = false;
  if (decoded.bitPP === 32) {
    let opaque = 0;
    let zero = 0;
    for (let i = 0; i < n; i++) {
      const a = rgba[i * 4 + 3]!;
      if (a === 255) opaque++;
      else if (a === 0) zero++;
    }
    alphaMatters = opaque !== n && zero !== n;
  }
  if (alphaMatters) return { width, height, channels: 4, data: new Uint8Array(rgba.subarray(0, n * 4)) };
  const rgb = new Uint8Array(n * 3);
  for (let i = 0; i < n; i++) {
    rgb[i * 3] = rgba[i * 4]!;
    rgb[i * 3 + 1] = rgba[i * 4 + 1]!;
    rgb[i * 3 + 2] = rgba[i * 4 + 2]!;
  }
  return { width, height, channels: 3, data: rgb };
}

/** Encode interleaved 8-bit RGB as a 24-bit BMP file (alpha is not stored). */
export function encodeBmp(rgb: Uint8Array, width: number, height: number): Buffer {
  const n = width * height;
  const abgr = Buffer.alloc(n * 4);
  for (let i = 0; i < n; i++) {
    abgr[i * 4] = 255;
    abgr[i * 4 + 1] = rgb[i * 3 + 2]!;
    abgr[i * 4 + 2] = rgb[i * 3 + 1]!;
    abgr[i * 4 + 3] = rgb[i * 3]!;
  }
  return encodeBmpFile({ width, height, data: abgr, bitPP: 24 }).data;
}
