import { hostTensor, NCHW_TO_NHWC, NHWC_TO_NCHW, splitBatch, transpose } from '../latents/host-tensor.js';
import { resizeLatents } from '../latents/resize-latents.js';
import type { StableDiffusionPipeline } from '../pipeline/pipeline.js';
import type {
  CommonRequest,
  GeneratedImage,
  GenerationProgress,
  GenerationResult,
} from '../pipeline/types.js';
import { resizeLanczos } from './lanczos-resize.js';
import type { JobHires } from './worker-protocol.js';

/** NCHW latents as the pipeline takes and gives them. */
type NchwLatents = { shape: readonly number[]; data: Float32Array };

/**
 * text2img with a hires fix (docs/diffusion-service.md, "Hires fix"), as A1111's: the first pass at the request's
 * size, upscaled (its latents, bilinear or nearest; or its decoded images, Lanczos, encoded again), then each image
 * re-drawn by the pipeline's img2img with `strength` over `steps` (0: the first pass's), from the image's own seed.
 * Progress counts both passes as one run of steps.
 */
export async function text2imgHires(
  pipe: StableDiffusionPipeline,
  common: CommonRequest,
  size: { height: number; width: number },
  hires: JobHires,
): Promise<GenerationResult> {
  const latent = hires.upscaler !== 'lanczos';
  const firstSteps = common.num_inference_steps ?? 0;
  const steps = hires.steps > 0 ? hires.steps : firstSteps;
  const perImage = Math.min(Math.floor(steps * hires.strength), steps);
  const batch = common.num_images_per_prompt ?? 1;
  const report = common.onProgress;
  const from = (offset: number) =>
    report &&
    ((p: GenerationProgress) =>
      report({ ...p, step: offset + p.step, totalSteps: firstSteps + batch * perImage }));
  const first = await pipe.text2img({ ...common, ...size, return_latents: latent, onProgress: from(0) });
  const upscaled = first.latents ? upscaleLatents(first.latents, hires, pipe.vae.scaleFactor) : [];
  const images: GeneratedImage[] = [];
  for (let k = 0; k < first.images.length; k++) {
    const start = latent
      ? { init_latents: upscaled[k] }
      : { image: resizeLanczos(first.images[k], hires.width, hires.height) };
    const second = await pipe.img2img({
      ...common,
      ...start,
      prompt: hires.prompt ?? common.prompt,
      negative_prompt: hires.negative_prompt ?? common.negative_prompt,
      seed: first.seeds[k],
      num_images_per_prompt: 1,
      num_inference_steps: steps,
      strength: hires.strength,
      second_pass: true,
      onProgress: from(firstSteps + k * perImage),
    });
    images.push(second.images[0]);
  }
  return { ...first, images, latents: undefined };
}

/** The first pass's latents (NCHW) resized to the hires size, one NCHW tensor per image. */
function upscaleLatents(latents: NchwLatents, hires: JobHires, scaleFactor: number): NchwLatents[] {
  const nhwc = transpose(hostTensor(latents.data, latents.shape), NCHW_TO_NHWC);
  const mode = hires.upscaler === 'latent-nearest' ? 'nearest' : 'bilinear';
  const resized = resizeLatents(nhwc, hires.height / scaleFactor, hires.width / scaleFactor, mode);
  return splitBatch(resized, resized.shape[0]).map((one) => transpose(one, NHWC_TO_NCHW));
}
