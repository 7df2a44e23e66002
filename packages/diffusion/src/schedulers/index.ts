export { resolveSchedulerConfig } from './config.js';
export { DDIMScheduler } from './ddim.js';
export { DPMSolverMultistepScheduler } from './dpm-solver.js';
export { EulerDiscreteScheduler } from './euler.js';
export { EulerAncestralDiscreteScheduler } from './euler-ancestral.js';
export {
  createScheduler,
  createSchedulerFromFolderConfig,
  isSchedulerName,
  schedulerNameForClass,
} from './factory.js';
export { GaussianNoise } from './gaussian-noise.js';
export { img2imgTimesteps } from './img2img.js';
export { computeNoiseSchedule, type NoiseSchedule } from './noise-schedule.js';
export { PNDMScheduler } from './pndm.js';
export * from './types.js';
