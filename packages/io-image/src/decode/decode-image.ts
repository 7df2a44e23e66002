import { isTiffinError } from '@tiffin/core';
import sharp, { type Metadata, type Sharp } from 'sharp';
import { assertBmpCarriesPixels, readBmpHeader } from '../codec/bmp.js';
import { decodeBmpOffThread } from '../codec/bmp-off-thread.js';
import type { PilMode } from '../modes.js';
import { fromRgb } from '../pixels/convert.js';
import { TiffinImage } from '../tiffin-image.js';
import { assertWithinPixelLimit } from './limits.js';

export interface DecodeOptions {
  /** Mode of the decoded pixels; null keeps the file's own (RGB, RGBA, L, LA, 16-bit grey as 'I'). */
  readonly mode: PilMode | null;
  readonly maxPixels: number;
}

/** Decoding failed because of the bytes (not a limit): callers turn it into a BadInput with context. */
export class ImageDecodeError extends Error {
  override readonly name = 'ImageDecodeError';
}

/**
 * Decode `bytes`, whose type `mimeType` was sniffed from the content. The dimensions are read from the
 * header first and checked against `maxPixels`, so a decompression bomb is refused before its pixels are
 * allocated; sharp gets the same limit (`limitInputPixels`) as a second guard.
 */
export async function decodeImage(
  bytes: Uint8Array,
  mimeType: string,
  options: DecodeOptions,
): Promise<TiffinImage> {
  try {
    return mimeType === 'image/bmp'
      ? await decodeBmpImage(bytes, options)
      : await decodeWithSharp(bytes, mimeType, options);
  } catch (err) {
    if (isTiffinError(err)) throw err;
    throw new ImageDecodeError(err instanceof Error ? err.message : String(err), { cause: err });
  }
}

/** BMP: the header bounded here, the pixels decoded off the event loop (bmp-ts in a worker, then sharp). */
async function decodeBmpImage(bytes: Uint8Array, options: DecodeOptions): Promise<TiffinImage> {
  const header = readBmpHeader(bytes);
  assertWithinPixelLimit(header.width, header.height, options.maxPixels);
  assertBmpCarriesPixels(header);
  const bmp = await decodeBmpOffThread(bytes);
  const mode = options.mode ?? (bmp.channels === 4 ? 'RGBA' : 'RGB');
  return new TiffinImage(fromRgb(bmp.data, bmp.channels, bmp.width, bmp.height, mode), 'image/bmp');
}

async function decodeWithSharp(
  bytes: Uint8Array,
  mimeType: string,
  options: DecodeOptions,
): Promise<TiffinImage> {
  const source = () => sharp(bytes, { limitInputPixels: options.maxPixels });
  const requested = options.mode;
  if (requested !== null && requested !== 'I') {
    // Every mode but 'I' (which may come from 16-bit grey) is made from 8-bit sRGB whatever the header says,
    // so the header is not read first (a pipeline of its own, ~0.5 ms): sharp refuses an oversized image from
    // its header (`limitInputPixels`, the same width × height test). Only on failure is the header read, so
    // errors are exactly those of a header-first check (413 for too many pixels, its message for a bad header).
    return decodeToMode(source, mimeType, requested).catch(async (err: unknown) => {
      await readCheckedHeader(bytes, options.maxPixels);
      throw err;
    });
  }
  const meta = await readCheckedHeader(bytes, options.maxPixels);
  const grey16 = (meta.channels ?? 3) <= 2 && meta.depth === 'ushort';
  const mode: PilMode = requested ?? nativeMode(meta.channels ?? 3, meta.space, grey16);

  if (mode === 'I' && grey16) {
    const { data, info } = await source()
      .toColourspace('grey16')
      .extractChannel(0)
      .raw({ depth: 'ushort' })
      .toBuffer({ resolveWithObject: true });
    const values = new Uint16Array(data.buffer, data.byteOffset, info.width * info.height);
    return new TiffinImage(
      { width: info.width, height: info.height, mode, data: Int32Array.from(values) },
      mimeType,
    );
  }
  return decodeToMode(source, mimeType, mode);
}

/**
 * The header's description of the image, refused (PayloadTooLarge) when it announces more than `maxPixels`.
 * metadata() parses the header only: no pixel buffer exists yet, so sharp's own limit is lifted here and
 * ours is applied with a clear message.
 */
async function readCheckedHeader(bytes: Uint8Array, maxPixels: number): Promise<Metadata> {
  const meta = await sharp(bytes, { limitInputPixels: false }).metadata();
  if (!meta.width || !meta.height) throw new Error('image has no dimensions');
  assertWithinPixelLimit(meta.width, meta.height, maxPixels);
  return meta;
}

/** Decode to 8-bit sRGB (with or without alpha, as `mode` needs) and convert to `mode`. */
async function decodeToMode(source: () => Sharp, mimeType: string, mode: PilMode): Promise<TiffinImage> {
  const wantsAlpha = mode === 'RGBA' || mode === 'LA';
  const pipeline = wantsAlpha ? source().ensureAlpha() : source().removeAlpha();
  const { data, info } = await pipeline
    .toColourspace('srgb')
    .raw({ depth: 'uchar' })
    .toBuffer({ resolveWithObject: true });
  const rgb = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  const channels = info.channels === 4 ? 4 : 3;
  return new TiffinImage(fromRgb(rgb, channels, info.width, info.height, mode), mimeType);
}

function nativeMode(channels: number, space: string | undefined, grey16: boolean): PilMode {
  if (space === 'cmyk') return 'CMYK';
  if (grey16) return 'I';
  return (['L', 'LA', 'RGB', 'RGBA'] as const)[channels - 1] ?? 'RGB';
}
