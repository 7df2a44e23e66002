import { BadInput } from '@tiffin/core';
import { z } from 'zod';
import type { GeneratedImages } from '../images-output.js';
import {
  GENERATION_KINDS,
  type GenerationKindName,
  type GenerationRequest,
  type KindContext,
} from '../kinds/index.js';
import { img2imgSchema, inpaintSchema, text2imgSchema } from '../request-schemas.js';
import type { CompatGenerator, GenerationWatch, LoraFile } from './generator.js';

/** What the compatible APIs need of the diffusion service they run on. */
export interface CompatGeneratorDeps {
  /** The kinds the service serves. */
  kinds: readonly GenerationKindName[];
  context: KindContext;
  /** The model folder's name. */
  modelName: string;
  /** The scheduler a request without one gets, where known when the generator is made. */
  defaultScheduler(): string | null;
  listLoras(): Promise<LoraFile[]>;
  /** Runs a kind's request through the service's queue and model worker, stopped when `signal` aborts. */
  generate(
    request: GenerationRequest,
    signal: AbortSignal,
    watch: GenerationWatch | undefined,
  ): Promise<GeneratedImages>;
}

/** The service's kinds as the compatible APIs call them: bodies in the kinds' field names, checked by their schemas. */
export function compatGenerator(deps: CompatGeneratorDeps): CompatGenerator {
  const { kinds, context } = deps;
  const { limits, family, defaults, defaulted } = context;
  const run = async (
    name: GenerationKindName,
    value: unknown,
    signal: AbortSignal,
    watch: GenerationWatch | undefined,
  ): Promise<GeneratedImages> => {
    if (!kinds.includes(name)) throw new BadInput(`this model does not serve ${name}`);
    const request = GENERATION_KINDS[name].toRequest(value, context);
    const images = await deps.generate(request, signal, watch);
    return { ...images, format: request.output.format, quality: request.output.quality };
  };
  const parse = <T>(schema: z.ZodType<T>, body: unknown): T => {
    const result = schema.safeParse(body);
    if (!result.success) throw new BadInput(z.prettifyError(result.error));
    return result.data;
  };
  return {
    kinds,
    maxSize: limits.maxSize,
    defaultSize: context.defaultSize,
    maxImages: limits.maxImages,
    defaults: { ...defaulted, scheduler: defaulted.scheduler ?? deps.defaultScheduler() },
    modelName: deps.modelName,
    listLoras: () => deps.listLoras(),
    text2img: (body, signal, watch) =>
      run(
        'text2img',
        parse(text2imgSchema(limits, context.defaultSize, family, defaults), body),
        signal,
        watch,
      ),
    img2img: (body, image, signal, watch) =>
      run(
        'img2img',
        { img: image, data: parse(img2imgSchema(limits, family, defaults), body) },
        signal,
        watch,
      ),
    inpaint: (body, image, mask, signal, watch) =>
      run(
        'inpaint',
        { image, mask_image: mask, data: parse(inpaintSchema(limits, family, defaults), body) },
        signal,
        watch,
      ),
  };
}
