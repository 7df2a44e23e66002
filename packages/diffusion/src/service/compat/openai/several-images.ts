import sharp from 'sharp';
import type { UploadedImage } from '../generator.js';

/** The most `image[]` parts an edit takes (OpenAI's bound for its GPT image models). */
export const MAX_EDIT_IMAGES = 16;

/** `image` resized to `width`×`height` (every side scaled: the picture is fitted, not cropped). */
export async function resizedTo(image: UploadedImage, width: number, height: number): Promise<UploadedImage> {
  if (image.width === width && image.height === height) return image;
  const { data, info } = await sharp(image.data, {
    raw: { width: image.width, height: image.height, channels: image.channels as 1 | 2 | 3 | 4 },
  })
    .resize(width, height, { fit: 'fill' })
    .raw()
    .toBuffer({ resolveWithObject: true });
  return { width: info.width, height: info.height, channels: info.channels, data: new Uint8Array(data) };
}

/**
 * Several reference images of one edit (OpenAI's `image[]`) as the one starting image an img2img or inpaint run
 * takes: every image fitted to the first's size and averaged, pixel by pixel, so each contributes equally to what
 * the model repaints (a mask, as in OpenAI's API, is the first image's). One image is returned as it is.
 */
export async function combinedImage(images: readonly UploadedImage[]): Promise<UploadedImage> {
  const [first, ...rest] = images;
  if (rest.length === 0) return first;
  const { width, height, channels } = first;
  const sum = new Uint32Array(width * height * channels);
  for (const image of images) {
    const fitted = await resizedTo(image, width, height);
    for (let i = 0; i < sum.length; i++) sum[i] += fitted.data[i];
  }
  const data = new Uint8Array(sum.length);
  for (let i = 0; i < sum.length; i++) data[i] = Math.round(sum[i] / images.length);
  return { width, height, channels, data };
}
