import sharp, { type Metadata } from 'sharp';
import { uploadThreads } from '../kinds/images.js';

/** Decoded 8-bit pixels of an upload (compat/generator.ts's `UploadedImage`, declared here so decoding depends on no kind). */
export interface DecodedUpload {
  width: number;
  height: number;
  channels: number;
  data: Uint8Array;
}

/** Uploaded bytes that are no image sharp can read, or (`tooLarge`) an image with more pixels than allowed. */
export class UnreadableImage extends Error {
  constructor(
    message: string,
    readonly tooLarge = false,
  ) {
    super(message);
  }
}

/** What the upload threads answer a decode with: the pixels (moved, not copied), or why the bytes are unreadable. */
export type DecodeAnswer = { image: DecodedUpload } | { unreadable: string; tooLarge: boolean };

/**
 * Uploaded image bytes as 8-bit pixels (RGB, or RGBA when `keepAlpha` and it has alpha): the size is read from
 * the header and refused over `maxPixels` before anything is decoded. Decoded in the upload threads
 * (`resize-thread.ts`): the pixels come back moved into a buffer of the event loop's own, so a resize after it
 * can move them on (`rgbInput`'s `transfer`) where sharp's own buffer (external memory) would be copied, 50 MB
 * for a 4096² upload, holding the loop. Only the compressed bytes are copied there.
 */
export async function decodeUpload(
  bytes: Uint8Array,
  maxPixels: number,
  keepAlpha = false,
  /** The request's: a decode still waiting for a thread when it aborts is dropped (`TaskPool.run`). */
  signal?: AbortSignal,
): Promise<DecodedUpload> {
  const args = [bytes, maxPixels, keepAlpha];
  const answer = await uploadThreads().run<DecodeAnswer>('decodeUpload', args, [], signal);
  if ('unreadable' in answer) throw new UnreadableImage(answer.unreadable, answer.tooLarge);
  return answer.image;
}

/** `decodeUpload` on the calling thread, its pixels in sharp's buffer (the upload threads' task). */
export async function decodeUploadHere(
  bytes: Uint8Array,
  maxPixels: number,
  keepAlpha = false,
): Promise<DecodedUpload> {
  let meta: Metadata;
  try {
    // The header alone, with no pixel bound: an image over the bound is a size error below, not an unreadable one.
    meta = await sharp(bytes, { limitInputPixels: false }).metadata();
  } catch {
    throw new UnreadableImage('is not a PNG, JPEG or WebP image');
  }
  const { width, height } = meta;
  if (!width || !height) throw new UnreadableImage('is not a PNG, JPEG or WebP image');
  if (width * height > maxPixels)
    throw new UnreadableImage(
      `is ${width}×${height} (${width * height} pixels), larger than the ${maxPixels} pixels this model accepts`,
      true,
    );
  try {
    let pipeline = sharp(bytes, { limitInputPixels: maxPixels });
    pipeline =
      keepAlpha && meta.hasAlpha ? pipeline.ensureAlpha() : pipeline.removeAlpha().toColourspace('srgb');
    const { data, info } = await pipeline.raw().toBuffer({ resolveWithObject: true });
    return {
      width: info.width,
      height: info.height,
      channels: info.channels,
      data: new Uint8Array(data.buffer, data.byteOffset, data.byteLength),
    };
  } catch {
    throw new UnreadableImage('could not be decoded');
  }
}
