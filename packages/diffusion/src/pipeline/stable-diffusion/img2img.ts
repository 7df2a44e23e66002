import type { VaeEngine } from '../../engines/engine-models.js';
import { add, mul } from '../../latents/float32-math.js';
import { type HostTensor, repeatBatch } from '../../latents/host-tensor.js';
import { img2imgTimesteps } from '../../schedulers/img2img.js';
import type { DenoiseStart, GenerationRun } from '../generation-run.js';
import { imageToTensor } from '../image.js';
import type { RgbImage } from '../types.js';

/**
 * img2img's `prepareLatents` seam (docs/spec/diffusion.md §8.2): the image's latent sample, noised to the first of the
 * timesteps its strength leaves.
 */
export async function img2imgLatents(
  run: GenerationRun,
  vae: Pick<VaeEngine, 'config' | 'encodeOnHost'>,
  image: RgbImage,
  strength: number,
): Promise<DenoiseStart> {
  const { scheduler, params, noise } = run;
  const steps = params.num_inference_steps;
  const { timesteps } = img2imgTimesteps(scheduler, steps, strength);
  const { mean, std } = await vae.encodeOnHost(imageToTensor(image));
  // One VAE sample per image (each from its own seed), broadcast from the one encoding.
  const eps = noise.draw('vae', [run.batch, ...mean.shape.slice(1)]);
  const lat0 = mul(
    add(broadcastBatch(mean, run.batch), mul(broadcastBatch(std, run.batch), eps)),
    vae.config.scaling_factor,
  );
  const added = noise.draw('latents', lat0.shape);
  const latents = scheduler.addNoise(lat0, added, timesteps[0]);
  return { latents, timesteps, totalSteps: Math.min(Math.floor(steps * strength), steps) };
}

/** `x` ([1, …]) repeated to `batch` rows, as broadcasting against the batch's draws does. */
function broadcastBatch(x: HostTensor, batch: number): HostTensor {
  return x.shape[0] === batch ? x : repeatBatch(x, batch);
}
