// @tiffin/diffusion/testing — what tests and benchmarks build and check models with: a tiny pipeline folder
// written from deterministic weights, the weight lists of each network, a safetensors writer, the scheduler
// classes. No stability promise; a service needs none of it. Loading it never loads TF.js.

export { type ClipTextConfig, clipTextWeightSpecs } from './architectures/clip-text.js';
export { unetWeightSpecs } from './architectures/unet.js';
export { type UNetConfig, validateUNetConfig } from './architectures/unet-config.js';
export { type VaeConfig, vaeWeightSpecs } from './architectures/vae.js';
export { loadOnnxComponents, type OnnxComponents, type OnnxLoadOptions } from './engines/onnx/load.js';
export { type RepoFile, selectPipelineFiles, selectTinyAutoencoderFiles } from './hub/select-files.js';
export { readLoraFile } from './lora/parse.js';
export { type DDIMConfig, DDIMScheduler } from './schedulers/ddim.js';
export { type DPMSolverConfig, DPMSolverMultistepScheduler } from './schedulers/dpm-solver.js';
export { type EulerConfig, EulerDiscreteScheduler } from './schedulers/euler.js';
export { EulerAncestralDiscreteScheduler } from './schedulers/euler-ancestral.js';
export { GaussianNoise } from './schedulers/gaussian-noise.js';
export { type LCMConfig, LCMScheduler } from './schedulers/lcm.js';
export { type PNDMConfig, PNDMScheduler } from './schedulers/pndm.js';
export { cannyEdges } from './service/controlnet/canny.js';
export type { TinyFlavour } from './tiny/tiny-configs.js';
export {
  tinyControlNetConfig,
  type WriteTinyControlNetOptions,
  writeTinyControlNet,
} from './tiny/write-tiny-controlnet.js';
export { type WriteTinyPipelineOptions, writeTinyPipeline } from './tiny/write-tiny-pipeline.js';
export { detInput, detUniform, detWeight, fnv1a32 } from './weights/deterministic.js';
export {
  encodeSafetensors,
  type SafetensorsEntry,
  SafetensorsFile,
  type TensorToWrite,
  writeSafetensors,
} from './weights/safetensors.js';
export type { WeightKind, WeightSpec } from './weights/weight-spec.js';
