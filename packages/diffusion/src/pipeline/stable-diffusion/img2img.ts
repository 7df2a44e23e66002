import type { VaeEngine } from '../../engines/engine-models.js';
import { add, mul } from '../../latents/float32-math.js';
import { type HostTensor, repeatBatch } from '../../latents/host-tensor.js';
import { img2imgTimesteps } from '../../schedulers/img2img.js';
import type { DenoiseStart, GenerationRun } from '../generation-run.js';
import { imageToTensor } from '../image.js';
import type { RgbImage } from '../types.js';

/**
 * img2img's `prepareLatents` seam (docs/spec/diffusion.md §8.2): the image's latent sample (or the given NHWC
 * latents, already VAE-scaled: a hires fix's upscaled first pass), noised to the first of the timesteps its strength
 * leaves. `keepAtZero`: strength 0 denoises nothing and returns the start as it is (A1111's hires fix with
 * denoising 0) instead of refusing.
 */
export async function img2imgLatents(
  run: GenerationRun,
  vae: Pick<VaeEngine, 'config' | 'encodeOnHost'>,
  source: RgbImage | HostTensor,
  strength: number,
  keepAtZero = false,
): Promise<DenoiseStart> {
  const { scheduler, params, noise } = run;
  const steps = params.num_inference_steps;
  const lat0 = 'shape' in source ? broadcastBatch(source, run.batch) : await imageLatents(run, vae, source);
  if (keepAtZero && strength === 0) return { latents: lat0, timesteps: [], totalSteps: 0 };
  const { timesteps } = img2imgTimesteps(scheduler, steps, strength);
  const added = noise.draw('latents', lat0.shape);
  const latents = scheduler.addNoise(lat0, added, timesteps[0]);
  return { latents, timesteps, totalSteps: Math.min(Math.floor(steps * strength), steps) };
}

/** The image's VAE-scaled latent sample: one per image (each from its own seed), broadcast from the one encoding. */
async function imageLatents(
  run: GenerationRun,
  vae: Pick<VaeEngine, 'config' | 'encodeOnHost'>,
  image: RgbImage,
): Promise<HostTensor> {
  const { mean, std } = await vae.encodeOnHost(imageToTensor(image));
  const eps = run.noise.draw('vae', [run.batch, ...mean.shape.slice(1)]);
  return mul(
    add(broadcastBatch(mean, run.batch), mul(broadcastBatch(std, run.batch), eps)),
    vae.config.scaling_factor,
  );
}

/** `x` ([1, …]) repeated to `batch` rows, as broadcasting against the batch's draws does. */
function broadcastBatch(x: HostTensor, batch: number): HostTensor {
  return x.shape[0] === batch ? x : repeatBatch(x, batch);
}
