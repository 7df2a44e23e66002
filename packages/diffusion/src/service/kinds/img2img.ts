import { Multipart } from '@tiffin/core';
import { Image, type TiffinImage } from '@tiffin/io-image';
import { jsonModel } from '@tiffin/io-json';
import { type Img2ImgBody, generationParameters, img2imgSchema, requestLoras } from '../request-schemas.js';
import { jobImage, rgbInput } from './images.js';
import type { GenerationKind } from './kind.js';

/** `POST /img2img`: re-draw an uploaded image (multipart: `img` and the JSON `data` part). */
export const img2img: GenerationKind = {
  name: 'img2img',
  title: 'image to image',
  doc: 'Re-draw an image guided by a prompt (JPEG; several images: multipart/mixed).',
  input: ({ limits, family }) =>
    new Multipart({ img: new Image(), data: jsonModel(img2imgSchema(limits, family)) }),
  toRequest(value, { limits }) {
    const parts = value as { img: TiffinImage; data: Img2ImgBody };
    const image = rgbInput('img', parts.img, limits);
    return {
      input: {
        kind: 'img2img',
        params: generationParameters(parts.data),
        strength: parts.data.strength,
        height: image.height,
        width: image.width,
        image,
      },
      loras: requestLoras(parts.data.lora_weights),
    };
  },
  run: (pipe, input, common) =>
    pipe.img2img({ ...common, strength: input.strength, image: jobImage(input, 'image') }),
};
