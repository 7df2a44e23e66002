// @tiffin/diffusion — Stable Diffusion 1.x / 2.x and SDXL on ONNX Runtime or TensorFlow.js.
// Loading this entry never loads TF.js (an optional peer): its model classes are in `@tiffin/diffusion/tfjs`, and
// the pipeline imports them only when a TF.js backend is chosen. What tests build models with (deterministic
// weights, the tiny pipeline writer, the weight specs, the scheduler classes) is `@tiffin/diffusion/testing`.
// The entry is capped (`test/repo/diffusion-entry.test.ts`): a new public name is a decision.

export { BACKEND_NAMES, BACKEND_PREFERENCE, type BackendChoice, type BackendName } from './backend.js';
export { assertBackendPackages, backendPackageNames, missingBackendPackages } from './backend-packages.js';
export { SingleFileError, type SingleFileOptions, singleFileToDiffusers } from './checkpoints/single-file.js';
export {
  type DiffusionOnnxOptions,
  ONNX_WEIGHT_FORMATS,
  type OnnxWeights,
  parseOnnxWeights,
} from './engines/onnx/weight-format.js';
export {
  DEFAULT_HUB_ENDPOINT,
  type DownloadProgress,
  downloadPipeline,
  type HubDownloadOptions,
  type HubDownloadResult,
  HubUnreachableError,
} from './hub/download.js';
export {
  DEFAULT_MODEL_ID,
  DEFAULT_SDXL_MODEL_ID,
  type ResolvedModel,
  type ResolveModelOptions,
  resolveControlNet,
  resolveDiffusionModel,
  resolveTinyAutoencoder,
} from './hub/model-source.js';
export { LoraCache } from './lora/cache.js';
export { mergeLora } from './lora/merge.js';
export { prepareRuntimeLora, type RuntimeLora } from './lora/runtime.js';
export type { AppliedLora, ApplyLoraOptions, LoraFile } from './lora/types.js';
export { GenerationCancelled } from './pipeline/cancel.js';
export type { LoadComponentsOptions, PipelineComponents, SdxlComponents } from './pipeline/components.js';
export { LCM_LORA_DEFAULTS, type ModelDefaults } from './pipeline/model-defaults.js';
export { FAMILY_DEFAULTS, type PipelineFamily } from './pipeline/parameters.js';
export { type FromPretrainedOptions, StableDiffusionPipeline } from './pipeline/pipeline.js';
export type {
  CommonRequest,
  ControlNetUnit,
  GeneratedImage,
  GenerationProgress,
  GenerationResult,
  Img2ImgRequest,
  InjectedNoise,
  NoisePurpose,
  RgbImage,
  Text2ImgRequest,
} from './pipeline/types.js';
export { createScheduler, createSchedulerFromFolderConfig, isSchedulerName } from './schedulers/factory.js';
export { SCHEDULER_NAMES, type SchedulerName } from './schedulers/registry.js';
export type { Scheduler, SchedulerConfig } from './schedulers/types.js';
export {
  createDiffusionService,
  type DiffusionPipelineKind,
  type DiffusionService,
  type DiffusionServiceOptions,
} from './service/diffusion-service.js';
export { QueueFullError } from './service/generation-queue.js';
export { LoraPathError } from './service/lora-roots.js';
export { pipelineFamily } from './service/model-config.js';
export { ModelTooLargeError } from './service/model-fit.js';
export {
  DEFAULT_GENERATION_LIMITS,
  type GenerationLimits,
  type Img2ImgBody,
  type InpaintBody,
  type Text2ImgBody,
} from './service/request-schemas.js';
export { clipVocabFromMerges } from './tokenizer/byte-symbols.js';
export { ClipTokenizer, type ClipTokenizerOptions } from './tokenizer/clip-tokenizer.js';
export { ModelFolderError } from './weights/folder.js';
export { SafetensorsError } from './weights/safetensors.js';
export { WeightShapeError } from './weights/weight-spec.js';
