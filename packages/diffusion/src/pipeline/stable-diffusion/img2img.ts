import * as tf from '@tensorflow/tfjs';
import type { AutoencoderKL } from '../../models/vae.js';
import { img2imgTimesteps } from '../../schedulers/index.js';
import type { DenoiseStart, GenerationRun } from '../generation-run.js';
import { imageToTensor } from '../image.js';
import type { RgbImage } from '../types.js';

/** The VAE as img2img uses it (the tfjs model's encode may also answer with a promise on other engines). */
type ImageEncoder = Pick<AutoencoderKL, 'config'> & {
  encode(x: tf.Tensor4D): ReturnType<AutoencoderKL['encode']> | Promise<ReturnType<AutoencoderKL['encode']>>;
};

/**
 * img2img's `prepareLatents` seam (docs/spec/diffusion.md §8.2): the image's latent sample, noised to the first of the
 * timesteps its strength leaves.
 */
export async function img2imgLatents(
  run: GenerationRun,
  vae: ImageEncoder,
  image: RgbImage,
  strength: number,
): Promise<DenoiseStart> {
  const { scheduler, params, noise } = run;
  const steps = params.num_inference_steps;
  const { timesteps } = img2imgTimesteps(scheduler, steps, strength);
  const pixels = imageToTensor(image);
  const { mean, std } = await vae.encode(pixels);
  pixels.dispose();
  // One VAE sample per image (each from its own seed), broadcast from the one encoding.
  const eps = noise.draw('vae', [run.batch, ...mean.shape.slice(1)]);
  const lat0 = tf.tidy(() =>
    tf.mul(tf.add(mean, tf.mul(std, eps)), vae.config.scaling_factor),
  ) as tf.Tensor4D;
  tf.dispose([mean, std, eps]);
  const added = noise.draw('latents', lat0.shape);
  const latents = scheduler.addNoise(lat0, added, timesteps[0]) as tf.Tensor4D;
  tf.dispose([lat0, added]);
  return { latents, timesteps, totalSteps: Math.min(Math.floor(steps * strength), steps) };
}
