import { infotext } from '../../infotext.js';
import type { ServedModel } from '../../model-hash.js';
import { encodeGenerated } from '../../output-format.js';
import type { A1111Options } from './a1111-options.js';
import type { A1111Plan } from './a1111-request.js';

/** What every image of one A1111 request is written with. */
export interface A1111ImageContext {
  plan: A1111Plan;
  model: ServedModel;
  options: A1111Options;
}

/** The infotext of the `width`×`height` image made with `seed`, as the request's settings give it. */
function imageInfotext(
  { plan, model, options }: A1111ImageContext,
  seed: number,
  width: number,
  height: number,
): string {
  const p = plan.parameters;
  const honoured = options.current;
  return infotext({
    prompt: String(p.prompt),
    negativePrompt: String(p.negative_prompt ?? ''),
    steps: Number(p.steps),
    sampler: plan.samplerName,
    scheduleType: plan.scheduleLabel,
    cfgScale: Number(p.cfg_scale),
    seed,
    // The image's own size: an img2img answer has its upload's (fitted) size, whatever `width` said; a hires
    // fix's is its first pass's, as A1111 writes it.
    width: plan.hires ? Number(p.width) : width,
    height: plan.hires ? Number(p.height) : height,
    modelHash: honoured.add_model_hash_to_info ? (model.hash?.short ?? null) : null,
    model: honoured.add_model_name_to_info ? model.name : null,
    denoisingStrength: typeof p.denoising_strength === 'number' ? p.denoising_strength : null,
    hiresUpscale: plan.hires?.upscale,
    hiresResize: plan.hires?.resize,
    hiresSteps: plan.hires?.steps,
    hiresUpscaler: plan.hires?.upscaler,
  });
}

/**
 * One generated RGB image as A1111 answers it: base64 in the settings' `samples_format` (PNG by default), with its
 * infotext where A1111 writes it, a PNG's `parameters` text chunk or a JPEG's or WebP's EXIF `UserComment` (unless
 * `enable_pnginfo` is off).
 */
export async function a1111Image(
  pixels: Uint8Array,
  width: number,
  height: number,
  seed: number,
  context: A1111ImageContext,
): Promise<{ base64: string; infotext: string }> {
  const text = imageInfotext(context, seed, width, height);
  const { format, quality } = context.options.output;
  const written = context.options.current.enable_pnginfo ? text : undefined;
  const q = format === 'png' ? undefined : quality;
  const bytes = await encodeGenerated(pixels, width, height, format, q, written);
  return { base64: bytes.toString('base64'), infotext: text };
}
