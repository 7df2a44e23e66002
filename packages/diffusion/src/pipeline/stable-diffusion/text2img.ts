import * as tf from '@tensorflow/tfjs';
import { InvalidArgument } from '@tiffin/core';
import type { DenoiseStart, GenerationRun } from '../generation-run.js';

const NCHW_TO_NHWC = [0, 2, 3, 1];

/**
 * text2img's `prepareLatents` seam (docs/spec/diffusion.md §8.1): Gaussian noise (or the caller's latents, NCHW) of
 * [images, H/f, W/f, C] times the scheduler's initial sigma, over every timestep.
 */
export function text2imgLatents(
  run: GenerationRun,
  shape: { scaleFactor: number; channels: number },
  given: Float32Array | undefined,
): DenoiseStart {
  const { scheduler, params } = run;
  const f = shape.scaleFactor;
  const nhwc = [run.batch, params.height / f, params.width / f, shape.channels];
  let start: tf.Tensor4D;
  if (given) {
    const nchw = [nhwc[0], nhwc[3], nhwc[1], nhwc[2]] as [number, number, number, number];
    const count = nchw.reduce((a, b) => a * b, 1);
    if (given.length !== count)
      throw new InvalidArgument(`latents must have shape [${nchw.join(', ')}] (${count} values)`);
    start = tf.tidy(() => tf.tensor4d(given, nchw).transpose(NCHW_TO_NHWC)) as tf.Tensor4D;
  } else start = run.noise.draw('latents', nhwc);
  const latents = tf.tidy(() => tf.mul(start, scheduler.initNoiseSigma)) as tf.Tensor4D;
  start.dispose();
  return { latents, timesteps: [...scheduler.timesteps], totalSteps: params.num_inference_steps };
}
