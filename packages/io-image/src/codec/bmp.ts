import { PayloadTooLarge } from '@tiffin/core';
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
  /** BI_RGB 0, BI_RLE8 1, BI_RLE4 2, bit fields 3/6. */
  readonly compression: number;
  /** Bytes from the pixel data offset to the end of the file. */
  readonly dataBytes: number;
}

/** The info-header sizes bmp-ts reads (BITMAPINFOHEADER and its V2–V5 extensions); others it refuses. */
const INFO_HEADER_SIZES = new Set([40, 52, 56, 108, 124]);
const BI_RLE8 = 1;
const BI_RLE4 = 2;
/** The most pixels RLE can describe per byte of pixel data: a run of 255 pixels in 2 bytes. */
const RLE_PIXELS_PER_BYTE = 128;

/**
 * Read the dimensions from the file and info headers only, exactly as the decoder (bmp-ts) will: the width
 * as an unsigned 32-bit number, the height signed (negative: rows top-down).
 */
export function readBmpHeader(bytes: Uint8Array): BmpHeader {
  if (bytes.length < 34 || bytes[0] !== 0x42 || bytes[1] !== 0x4d) throw new Error('not a BMP file');
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const infoSize = view.getUint32(14, true);
  if (!INFO_HEADER_SIZES.has(infoSize)) throw new Error(`unsupported BMP header size ${infoSize}`);
  return {
    width: view.getUint32(18, true),
    height: Math.abs(view.getInt32(22, true)),
    bitsPerPixel: view.getUint16(28, true),
    compression: view.getUint32(30, true),
    dataBytes: Math.max(0, bytes.length - view.getUint32(10, true)),
  };
}

/**
 * Refuse a file whose pixel data cannot hold the pixels its header declares, before the decoder allocates
 * for them: uncompressed rows must all be there (else: truncated), and RLE data must be long enough to
 * describe that many pixels (else 413: a few bytes of RLE asking for a huge image, decoded on the event loop).
 */
export function assertBmpCarriesPixels(header: BmpHeader): void {
  const { width, height, bitsPerPixel, compression, dataBytes } = header;
  if (compression === BI_RLE8 || compression === BI_RLE4) {
    if (width * height > dataBytes * RLE_PIXELS_PER_BYTE) {
      throw new PayloadTooLarge(
        `BMP declares ${width}x${height} pixels but carries ${dataBytes} bytes of RLE data, which describe at most ${dataBytes * RLE_PIXELS_PER_BYTE}`,
      );
    }
    return;
  }
  const rowBytes = Math.ceil((width * bitsPerPixel) / 32) * 4;
  if (rowBytes * height > dataBytes) {
    throw new Error(
      `truncated BMP: ${width}x${height} pixels need ${rowBytes * height} bytes of rows, the file carries ${dataBytes}`,
    );
  }
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
  let decoded: ReturnType<typeof decodeBmpFile>;
  try {
    decoded = decodeBmpFile(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), { toRGBA: true });
  } catch {
    // bmp-ts fails with Node's own buffer messages (offsets, sizes): the client gets one of its own.
    throw new Error('BMP pixel data is malformed or truncated');
  }
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
