import { InvalidArgument } from '@tiffin/core';
import type { Img2ImgTimesteps, Scheduler } from './types.js';

/**
 * img2img strength truncation (docs/spec/diffusion.md §8.2, diffusers `get_timesteps`): call after
 * `setTimesteps(numInferenceSteps)`. Sets the scheduler's begin index and returns the timesteps to
 * denoise over; `timesteps[0]` is the one to pass to `addNoise`.
 */
export function img2imgTimesteps(
  scheduler: Scheduler,
  numInferenceSteps: number,
  strength: number,
): Img2ImgTimesteps {
  if (!(strength >= 0 && strength <= 1)) {
    throw new InvalidArgument(`strength must be in [0, 1], got ${strength}`);
  }
  if (scheduler.numInferenceSteps !== numInferenceSteps) {
    throw new Error('img2imgTimesteps: call scheduler.setTimesteps(numInferenceSteps) first');
  }
  const init = Math.min(Math.floor(numInferenceSteps * strength), numInferenceSteps);
  const start = Math.max(numInferenceSteps - init, 0);
  const beginIndex = start * scheduler.order;
  const timesteps = scheduler.timesteps.slice(beginIndex);
  if (timesteps.length === 0) {
    throw new InvalidArgument(
      `strength ${strength} with num_inference_steps ${numInferenceSteps} leaves no denoising steps; increase either`,
    );
  }
  scheduler.setBeginIndex(beginIndex);
  return { timesteps, beginIndex };
}
