import type { Sharp } from 'sharp';
import { encodeBmp } from '../codec/bmp.js';
import type { ImageFormat } from '../formats.js';
import { snapshotPipeline } from '../pipeline/snapshot.js';
import { TiffinImage } from '../tiffin-image.js';

/**
 * Encode an image (or the output of a sharp pipeline) in `format`. JPEG and BMP carry no alpha: it is
 * dropped. TIFF is LZW-compressed (lossless). BMP is written as a 24-bit file by the BMP codec; every other format by sharp.
 */
export async function encodeImage(image: TiffinImage | Sharp, format: ImageFormat): Promise<Buffer> {
  if (format === 'bmp') {
    const rgbImage =
      image instanceof TiffinImage ? image.convert('RGB') : await TiffinImage.fromSharp(image, 'RGB');
    return encodeBmp(rgbImage.data as Uint8Array, rgbImage.width, rgbImage.height);
  }
  // The caller's pipeline is left as it was (its output format untouched): encode a snapshot of it.
  const pipeline = image instanceof TiffinImage ? image.toSharp() : snapshotPipeline(image);
  switch (format) {
    case 'jpeg':
      return pipeline.jpeg().toBuffer();
    case 'png':
      return pipeline.png().toBuffer();
    case 'webp':
      return pipeline.webp().toBuffer();
    case 'avif':
      return pipeline.avif().toBuffer();
    case 'tiff':
      return pipeline.tiff({ compression: 'lzw' }).toBuffer();
    case 'gif':
      return pipeline.gif().toBuffer();
  }
}
