export { type DDIMConfig, DDIMScheduler } from './ddim.js';
export { type DPMSolverConfig, DPMSolverMultistepScheduler } from './dpm-solver.js';
export { type DPMSolverSDEConfig, DPMSolverSDEScheduler } from './dpmpp-sde.js';
export { type EulerConfig, EulerDiscreteScheduler } from './euler.js';
export { EulerAncestralDiscreteScheduler } from './euler-ancestral.js';
export {
  createScheduler,
  createSchedulerFromFolderConfig,
  isSchedulerName,
  resolveSchedulerConfig,
  schedulerNameForClass,
} from './factory.js';
export { GaussianNoise } from './gaussian-noise.js';
export { type HeunConfig, HeunDiscreteScheduler } from './heun.js';
export { img2imgTimesteps } from './img2img.js';
export { type KDPM2Config, KDPM2DiscreteScheduler } from './kdpm2.js';
export { KDPM2AncestralDiscreteScheduler } from './kdpm2-ancestral.js';
export { type LCMConfig, LCMScheduler } from './lcm.js';
export { type LMSConfig, LMSDiscreteScheduler } from './lms.js';
export { computeNoiseSchedule, type NoiseSchedule } from './noise-schedule.js';
export { type PNDMConfig, PNDMScheduler } from './pndm.js';
export {
  KARRAS_SCHEDULER_NAMES,
  SCHEDULER_CLASS_NAMES,
  SCHEDULER_NAMES,
  type SchedulerName,
} from './registry.js';
export * from './types.js';
export { type UniPCConfig, UniPCMultistepScheduler } from './unipc.js';
