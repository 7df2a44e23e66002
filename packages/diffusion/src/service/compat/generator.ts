import { BadInput } from '@tiffin/core';
import { z } from 'zod';
import type { Generator } from '../generator.js';
import { GENERATION_KINDS, type GenerationKindName, type GenerationRequest } from '../kinds/index.js';
import { img2imgSchema, inpaintSchema, text2imgSchema } from '../request-schemas.js';

/** An uploaded image decoded to 8-bit pixels, as the kinds read it (RGB, or grey/RGBA for a mask). */
export interface UploadedImage {
  width: number;
  height: number;
  channels: number;
  data: Uint8Array;
}

/** The images a compatible API's body comes with: none (text2img), an image (img2img), an image and a mask (inpaint). */
export interface CompatImages {
  image?: UploadedImage;
  mask?: UploadedImage;
}

/**
 * A compatible API's body (OpenAI Images, AUTOMATIC1111) as the generator's request: in the kind's own field names,
 * checked by the kind's schema, so bounds and defaults are the native API's. 400 for a kind the model does not serve.
 */
export async function compatRequest(
  generator: Generator,
  body: Record<string, unknown>,
  { image, mask }: CompatImages = {},
  /** The request's: its uploads' resizes are dropped if it aborts first. */
  signal?: AbortSignal,
): Promise<GenerationRequest> {
  const { context } = generator;
  const { limits, family, defaults } = context;
  const name: GenerationKindName = !image ? 'text2img' : mask ? 'inpaint' : 'img2img';
  if (!generator.kinds.includes(name)) throw new BadInput(`this model does not serve ${name}`);
  const value = !image
    ? parse(text2imgSchema(limits, context.defaultSize, family, defaults), body)
    : mask
      ? { image, mask_image: mask, data: parse(inpaintSchema(limits, family, defaults), body) }
      : { img: image, data: parse(img2imgSchema(limits, family, defaults), body) };
  return GENERATION_KINDS[name].toRequest(value, context, signal);
}

function parse<T>(schema: z.ZodType<T>, body: unknown): T {
  const result = schema.safeParse(body);
  if (!result.success) throw new BadInput(z.prettifyError(result.error));
  return result.data;
}
