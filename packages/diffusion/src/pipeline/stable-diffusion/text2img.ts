import { InvalidArgument } from '@tiffin/core';
import { mul } from '../../latents/float32-math.js';
import { type HostTensor, NCHW_TO_NHWC, transpose } from '../../latents/host-tensor.js';
import type { DenoiseStart, GenerationRun } from '../generation-run.js';

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
  let start: HostTensor;
  if (given) {
    const nchw = [nhwc[0], nhwc[3], nhwc[1], nhwc[2]];
    const count = nchw.reduce((a, b) => a * b, 1);
    if (given.length !== count)
      throw new InvalidArgument(`latents must have shape [${nchw.join(', ')}] (${count} values)`);
    start = transpose({ data: given, shape: nchw }, NCHW_TO_NHWC);
  } else start = run.noise.draw('latents', nhwc);
  const latents = mul(start, scheduler.initNoiseSigma);
  return { latents, timesteps: [...scheduler.timesteps], totalSteps: params.num_inference_steps };
}
