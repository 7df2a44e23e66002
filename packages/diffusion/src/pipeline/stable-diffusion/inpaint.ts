import { InvalidArgument } from '@tiffin/core';
import type { VaeEngine } from '../../engines/engine-models.js';
import { add, mul } from '../../latents/float32-math.js';
import { concat, type HostTensor, repeatBatch } from '../../latents/host-tensor.js';
import { img2imgTimesteps } from '../../schedulers/img2img.js';
import type { DenoiseStart, GenerationRun } from '../generation-run.js';
import { imageToTensor } from '../image.js';
import type { MaskImage, RgbImage } from '../types.js';

/** An inpainting UNet's input: 4 latent channels, 1 mask channel, 4 masked-image latent channels. */
export const INPAINT_UNET_CHANNELS = 9;

type Vae = Pick<VaeEngine, 'config' | 'scaleFactor' | 'encodeOnHost'>;

/**
 * Inpainting's `prepareLatents` seam, with diffusers' `StableDiffusionInpaintPipeline` semantics:
 * - the mask is binarised (white, ≥ 0.5, is repainted) and the masked image is the image with the repainted
 *   part set to 0 (mid grey in [-1, 1]);
 * - strength 1 starts from pure noise (× the scheduler's initial sigma), below 1 from the image's latents
 *   noised to the first timestep strength leaves, as img2img does;
 * - an inpainting UNet (9 input channels) is given the mask and the masked image's latents beside the latents
 *   at every step (`unetExtra`);
 * - an ordinary UNet (4 channels) is used by blending: after each step, where the mask is black the latents are
 *   the image's own, noised to the next timestep (`afterStep`), so the unmasked part stays the image.
 */
export async function inpaintLatents(
  run: GenerationRun,
  vae: Vae,
  unetChannels: number,
  image: RgbImage,
  mask: MaskImage,
  strength: number,
): Promise<DenoiseStart> {
  const { scheduler, params, noise } = run;
  const latentChannels = vae.config.latent_channels;
  const inpaintingUnet = unetChannels === INPAINT_UNET_CHANNELS;
  if (!inpaintingUnet && unetChannels !== latentChannels)
    throw new InvalidArgument(
      `a UNet with ${unetChannels} input channels cannot inpaint (4, or 9 for an inpainting UNet)`,
    );
  if (mask.width !== image.width || mask.height !== image.height)
    throw new InvalidArgument(
      `mask_image is ${mask.width}×${mask.height}, the image ${image.width}×${image.height}: they must match`,
    );
  const steps = params.num_inference_steps;
  const { timesteps } = img2imgTimesteps(scheduler, steps, strength);
  const pixels = imageToTensor(image);
  const repaint = binaryMask(mask);
  const scale = vae.config.scaling_factor;
  const latentH = image.height / vae.scaleFactor;
  const latentW = image.width / vae.scaleFactor;
  const shape = [run.batch, latentH, latentW, latentChannels];

  // diffusers encodes the image only when it needs its latents: below strength 1, or to blend.
  const strengthMax = strength === 1;
  const needImageLatents = !inpaintingUnet || !strengthMax;
  const imageLatents = needImageLatents ? await sampleLatents(vae, pixels, run, scale) : undefined;
  const initial = noise.draw('latents', shape);
  const latents = strengthMax
    ? mul(initial, scheduler.initNoiseSigma)
    : scheduler.addNoise(imageLatents as HostTensor, initial, timesteps[0]);

  const latentMask = resizeNearest(repaint, image.width, image.height, latentW, latentH);
  const batchedMask = repeatBatch(latentMask, run.batch);
  const start: DenoiseStart = {
    latents,
    timesteps,
    totalSteps: Math.min(Math.floor(steps * strength), steps),
  };
  if (inpaintingUnet) {
    // The masked image's latents (a second VAE sample), diffusers' `prepare_mask_latents`.
    const masked = maskedImage(pixels, repaint);
    const maskedLatents = await sampleLatents(vae, masked, run, scale);
    const extra = concat([batchedMask, maskedLatents], -1);
    start.unetExtra = run.guided ? concat([extra, extra]) : extra;
  } else {
    const keep = imageLatents as HostTensor;
    start.afterStep = (current, i) => {
      const next = timesteps[i + 1];
      const proper = next === undefined ? keep : scheduler.addNoise(keep, initial, next);
      return blend(proper, current, batchedMask);
    };
  }
  return start;
}

/** The image's latent sample per image of the batch (each from its own seed), times the scaling factor. */
async function sampleLatents(
  vae: Vae,
  pixels: HostTensor,
  run: GenerationRun,
  scale: number,
): Promise<HostTensor> {
  const { mean, std } = await vae.encodeOnHost(pixels);
  const batched = (x: HostTensor) => (x.shape[0] === run.batch ? x : repeatBatch(x, run.batch));
  const eps = run.noise.draw('vae', [run.batch, ...mean.shape.slice(1)]);
  return mul(add(batched(mean), mul(batched(std), eps)), scale);
}

/**
 * The mask as diffusers' mask processor leaves it: grey levels (RGB as PIL's "L" conversion weighs them),
 * in [0, 1], then 1 where ≥ 0.5 (repaint) and 0 elsewhere. NHWC [1, H, W, 1].
 */
export function binaryMask(mask: MaskImage): HostTensor {
  const { width, height, data } = mask;
  const n = width * height;
  const channels = data.length / n;
  if (channels !== 1 && channels !== 3)
    throw new InvalidArgument(
      `mask_image data has ${data.length} values for ${width}×${height}: 1 or 3 per pixel`,
    );
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    let grey: number;
    if (channels === 1) grey = data[i];
    else {
      const [r, g, b] = [data[3 * i], data[3 * i + 1], data[3 * i + 2]];
      // PIL's ITU-R 601-2 luma with its fixed-point rounding (Image.convert("L")).
      grey = (r * 19595 + g * 38470 + b * 7471 + 0x8000) >> 16;
    }
    out[i] = grey / 255 >= 0.5 ? 1 : 0;
  }
  return { data: out, shape: [1, height, width, 1] };
}

/** The image with the repainted part set to 0 (diffusers: `image * (mask < 0.5)`). */
function maskedImage(pixels: HostTensor, repaint: HostTensor): HostTensor {
  const out = new Float32Array(pixels.data.length);
  for (let i = 0; i < repaint.data.length; i++) {
    const keep = repaint.data[i] < 0.5 ? 1 : 0;
    for (let c = 0; c < 3; c++) out[3 * i + c] = pixels.data[3 * i + c] * keep;
  }
  return { data: out, shape: pixels.shape };
}

/** Nearest-neighbour resize of a [1, H, W, 1] mask (torch's `interpolate` default: source index ⌊i · in/out⌋). */
function resizeNearest(
  mask: HostTensor,
  width: number,
  height: number,
  outW: number,
  outH: number,
): HostTensor {
  const out = new Float32Array(outW * outH);
  for (let y = 0; y < outH; y++) {
    const sy = Math.min(height - 1, Math.floor((y * height) / outH));
    for (let x = 0; x < outW; x++) {
      const sx = Math.min(width - 1, Math.floor((x * width) / outW));
      out[y * outW + x] = mask.data[sy * width + sx];
    }
  }
  return { data: out, shape: [1, outH, outW, 1] };
}

/** `(1 - mask) · kept + mask · current`, the mask broadcast over the latent channels. */
function blend(kept: HostTensor, current: HostTensor, mask: HostTensor): HostTensor {
  const channels = current.shape[3];
  const out = new Float32Array(current.data.length);
  const f = Math.fround;
  for (let i = 0; i < mask.data.length; i++) {
    const m = mask.data[i];
    const keep = f(1 - m);
    for (let c = 0; c < channels; c++) {
      const k = i * channels + c;
      out[k] = f(f(keep * kept.data[k]) + f(m * current.data[k]));
    }
  }
  return { data: out, shape: current.shape };
}
