import type { HostTensor } from '../latents/host-tensor.js';
import type { TinyDecoderModel } from './components.js';
import { tensorToImages } from './image.js';

/** A preview picture: uint8 RGB, HWC. */
export interface PreviewImage {
  width: number;
  height: number;
  data: Uint8Array;
}

/** Tiny-decoded previews per generation at most (and the last step's): each costs a decode. */
const DECODED_PREVIEWS = 4;
/** Longest side of a decoded preview (a 256² BMP is 196 KB): the picture, not the final image. */
export const PREVIEW_MAX_SIDE = 256;

/** Whether `step` of `totalSteps` gets a decoded preview: every ⌈total/4⌉ steps and the last. */
export function isPreviewStep(step: number, totalSteps: number): boolean {
  const every = Math.max(1, Math.ceil(totalSteps / DECODED_PREVIEWS));
  return step === totalSteps || step % every === 0;
}

/** The first image of NHWC latents decoded by the tiny autoencoder, shrunk to at most {@link PREVIEW_MAX_SIDE}. */
export async function decodedPreview(decoder: TinyDecoderModel, latents: HostTensor): Promise<PreviewImage> {
  const [, h, w, c] = latents.shape;
  const first = { data: latents.data.subarray(0, h * w * c), shape: [1, h, w, c] };
  const decoded = await decoder.decodeOnHost(first);
  const [, height, width] = decoded.shape;
  return shrink({ width, height, data: tensorToImages(decoded)[0].data }, PREVIEW_MAX_SIDE);
}

/** Box-filter downscale by the smallest integer factor that brings both sides within `maxSide`. */
export function shrink(image: PreviewImage, maxSide: number): PreviewImage {
  const f = Math.ceil(Math.max(image.width, image.height) / maxSide);
  if (f <= 1) return image;
  const width = Math.floor(image.width / f);
  const height = Math.floor(image.height / f);
  const data = new Uint8Array(width * height * 3);
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++)
      for (let ch = 0; ch < 3; ch++) {
        let sum = 0;
        for (let dy = 0; dy < f; dy++)
          for (let dx = 0; dx < f; dx++)
            sum += image.data[((y * f + dy) * image.width + x * f + dx) * 3 + ch];
        data[(y * width + x) * 3 + ch] = Math.round(sum / (f * f));
      }
  return { width, height, data };
}
