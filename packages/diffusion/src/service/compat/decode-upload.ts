import sharp, { type Metadata } from 'sharp';

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

/**
 * Uploaded image bytes as 8-bit pixels (RGB, or RGBA when `keepAlpha` and it has alpha): the size is read from
 * the header and refused over `maxPixels` before anything is decoded.
 */
export async function decodeUpload(
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
