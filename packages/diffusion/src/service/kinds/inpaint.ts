import { BadInput, Multipart } from '@tiffin/core';
import { Image, type TiffinImage } from '@tiffin/io-image';
import { jsonModel } from '@tiffin/io-json';
import { controlnetRequest } from '../controlnet/controlnet-request.js';
import {
  generationParameters,
  type InpaintBody,
  inpaintSchema,
  leftOutFields,
  requestedOutput,
  requestLoras,
} from '../request-schemas.js';
import { jobImage, rgbInput, uploadMaxPixels } from './images.js';
import type { GenerationKind } from './kind.js';

/**
 * `POST /inpaint`: repaint the white part of `mask_image` in `image` (multipart: `image`, `mask_image` and the
 * JSON `data` part with the text2img fields and `strength`), as diffusers' `StableDiffusionInpaintPipeline`.
 */
export const inpaint: GenerationKind = {
  name: 'inpaint',
  title: 'inpainting',
  doc: 'Repaint the white part of mask_image in image, guided by a prompt (JPEG, PNG or WebP by output_format or Accept; several images: multipart/mixed).',
  input: ({ limits, family, defaults }) =>
    new Multipart({
      // Both bounded from their headers before decoding, as img2img's upload.
      image: new Image({ maxPixels: uploadMaxPixels(limits) }),
      mask_image: new Image({ maxPixels: uploadMaxPixels(limits) }),
      data: jsonModel(inpaintSchema(limits, family, defaults)),
    }),
  async toRequest(value, { limits, defaulted, controlnets }, signal) {
    const parts = value as { image: TiffinImage; mask_image: TiffinImage; data: InpaintBody };
    const { image: picture, mask_image: mask } = parts;
    if (mask.width !== picture.width || mask.height !== picture.height)
      throw new BadInput(
        `mask_image is ${mask.width}×${mask.height} and image ${picture.width}×${picture.height}: they must be the same size`,
      );
    // Both through the same resize to multiples of 8; the mask as grey replicated to RGB (binarised later). Neither
    // is read again: their pixels move into the resizing thread where Node can move them (see img2img).
    const [image, maskRgb] = await Promise.all([
      rgbInput('image', picture, limits, { transfer: true, signal }),
      rgbInput('mask_image', greyAsRgb(mask), limits, { transfer: true, signal }),
    ]);
    return {
      input: {
        kind: 'inpaint',
        params: generationParameters(parts.data, defaulted),
        strength: parts.data.strength,
        height: image.height,
        width: image.width,
        image,
        mask: maskRgb,
      },
      loras: requestLoras(parts.data.lora_weights),
      leftOut: leftOutFields(parts.data),
      output: requestedOutput(parts.data),
      model: parts.data.model,
      controlnet: controlnetRequest(
        parts.data.controlnet,
        { names: controlnets ?? [], maxPixels: uploadMaxPixels(limits) },
        image.width,
        image.height,
      ),
    };
  },
  run: (pipe, input, common) =>
    pipe.inpaint({
      ...common,
      strength: input.strength,
      image: jobImage(input, 'image'),
      mask_image: jobImage(input, 'mask'),
    }),
};

/** A mask of any channel layout as an RGB picture of its grey levels (alpha ignored; RGB kept as it is). */
function greyAsRgb(mask: TiffinImage): { width: number; height: number; channels: number; data: Uint8Array } {
  const { width, height, channels } = mask;
  if (!(mask.data instanceof Uint8Array)) throw new BadInput('mask_image must be an 8-bit image');
  if (channels === 3) return { width, height, channels, data: mask.data };
  const data = new Uint8Array(width * height * 3);
  for (let i = 0; i < width * height; i++) {
    if (channels >= 3) {
      data.set(mask.data.subarray(i * channels, i * channels + 3), 3 * i);
    } else {
      const grey = mask.data[i * channels];
      data[3 * i] = grey;
      data[3 * i + 1] = grey;
      data[3 * i + 2] = grey;
    }
  }
  return { width, height, channels: 3, data };
}
