import { jsonModel } from '@tiffin/io-json';
import { controlnetRequest } from '../controlnet/controlnet-request.js';
import { text2imgHires } from '../hires-fix.js';
import { hiresJob } from '../hires-request.js';
import {
  generationParameters,
  leftOutFields,
  requestedOutput,
  requestLoras,
  type Text2ImgBody,
  text2imgSchema,
} from '../request-schemas.js';
import { uploadMaxPixels } from './images.js';
import type { GenerationKind } from './kind.js';

/** `POST /text2img`: an image from a prompt (JSON body). */
export const text2img: GenerationKind = {
  name: 'text2img',
  title: 'text to image',
  doc: 'Generate an image from a prompt (JPEG, PNG or WebP by output_format or Accept; several images: multipart/mixed).',
  input: ({ limits, defaultSize, family, defaults }) =>
    jsonModel(text2imgSchema(limits, defaultSize, family, defaults)),
  async toRequest(value, { defaulted, limits, controlnets }) {
    const body = value as Text2ImgBody;
    const hires = hiresJob(body.hires, body.width, body.height, limits.maxSize);
    return {
      input: {
        kind: 'text2img',
        params: generationParameters(body, defaulted),
        height: body.height,
        width: body.width,
        ...(hires ? { hires } : {}),
      },
      loras: requestLoras(body.lora_weights),
      leftOut: leftOutFields(body),
      output: requestedOutput(body),
      model: body.model,
      controlnet: controlnetRequest(
        body.controlnet,
        { names: controlnets ?? [], maxPixels: uploadMaxPixels(limits) },
        body.width,
        body.height,
      ),
    };
  },
  run: (pipe, input, common) => {
    const size = { height: input.height, width: input.width };
    return input.hires
      ? text2imgHires(pipe, common, size, input.hires)
      : pipe.text2img({ ...common, ...size });
  },
};
