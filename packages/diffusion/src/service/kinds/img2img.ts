import { Multipart } from '@tiffin/core';
import { Image, type TiffinImage } from '@tiffin/io-image';
import { jsonModel } from '@tiffin/io-json';
import { controlnetRequest } from '../controlnet/controlnet-request.js';
import {
  generationParameters,
  type Img2ImgBody,
  img2imgSchema,
  leftOutFields,
  requestedOutput,
  requestLoras,
} from '../request-schemas.js';
import { jobImage, rgbInput, uploadMaxPixels } from './images.js';
import type { GenerationKind } from './kind.js';

/** `POST /img2img`: re-draw an uploaded image (multipart: `img` and the JSON `data` part). */
export const img2img: GenerationKind = {
  name: 'img2img',
  title: 'image to image',
  doc: 'Re-draw an image guided by a prompt (JPEG, PNG or WebP by output_format or Accept; several images: multipart/mixed).',
  input: ({ limits, family, defaults }) =>
    new Multipart({
      // A pixel bound read from the image's header: a larger picture is refused (413) before a pixel of it is
      // decoded; one over the served size is resized down to it.
      img: new Image({ maxPixels: uploadMaxPixels(limits) }),
      data: jsonModel(img2imgSchema(limits, family, defaults)),
    }),
  async toRequest(value, { limits, defaulted, controlnets }, signal) {
    const parts = value as { img: TiffinImage; data: Img2ImgBody };
    // The upload is not read again: its pixels move into the resizing thread where Node can move them (a compatible
    // route's, decoded in the upload threads); sharp's own buffer (external memory) is copied.
    const image = await rgbInput('img', parts.img, limits, { transfer: true, signal });
    return {
      input: {
        kind: 'img2img',
        params: generationParameters(parts.data, defaulted),
        strength: parts.data.strength,
        height: image.height,
        width: image.width,
        image,
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
    pipe.img2img({ ...common, strength: input.strength, image: jobImage(input, 'image') }),
};
