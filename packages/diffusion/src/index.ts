// @tiffin/diffusion — Stable Diffusion 1.x / 2.x and SDXL on ONNX Runtime or TensorFlow.js.
// Loading this entry never loads TF.js (an optional peer): its model classes are in `@tiffin/diffusion/tfjs`, and
// the pipeline imports them only when a TF.js backend is chosen.

export { type ClipTextConfig, clipTextWeightSpecs } from './architectures/clip-text.js';
export { unetWeightSpecs } from './architectures/unet.js';
export { type UNetConfig, validateUNetConfig } from './architectures/unet-config.js';
export { type VaeConfig, vaeWeightSpecs } from './architectures/vae.js';
export { BACKEND_NAMES, BACKEND_PREFERENCE, type BackendChoice, type BackendName } from './backend.js';
export { loadOnnxComponents, type OnnxComponents, type OnnxLoadOptions } from './engines/onnx/load.js';
export {
  type DiffusionOnnxOptions,
  ONNX_WEIGHT_FORMATS,
  type OnnxWeights,
  parseOnnxWeights,
} from './engines/onnx/weight-format.js';
export * from './hub/index.js';
export * from './lora/index.js';
export { GenerationCancelled } from './pipeline/cancel.js';
export type { LoadComponentsOptions, PipelineComponents, SdxlComponents } from './pipeline/components.js';
export { LCM_LORA_DEFAULTS, type ModelDefaults } from './pipeline/model-defaults.js';
export { FAMILY_DEFAULTS, type PipelineFamily } from './pipeline/parameters.js';
export { type FromPretrainedOptions, StableDiffusionPipeline } from './pipeline/pipeline.js';
export type {
  CommonRequest,
  GeneratedImage,
  GenerationProgress,
  GenerationResult,
  Img2ImgRequest,
  InjectedNoise,
  NoisePurpose,
  RgbImage,
  Text2ImgRequest,
} from './pipeline/types.js';
export * from './schedulers/index.js';
export * from './service/index.js';
export type { TinyFlavour } from './tiny/tiny-configs.js';
export { type WriteTinyPipelineOptions, writeTinyPipeline } from './tiny/write-tiny-pipeline.js';
export { clipVocabFromMerges } from './tokenizer/byte-symbols.js';
export { ClipTokenizer, type ClipTokenizerOptions } from './tokenizer/clip-tokenizer.js';
export { detInput, detUniform, detWeight, fnv1a32 } from './weights/deterministic.js';
export { componentWeightFiles, ModelFolderError, type ModelIndex, readModelIndex } from './weights/folder.js';
export {
  encodeSafetensors,
  type SafetensorsEntry,
  SafetensorsError,
  SafetensorsFile,
  type TensorToWrite,
  writeSafetensors,
} from './weights/safetensors.js';
export {
  assertNotPickle,
  SingleFileError,
  type SingleFileOptions,
  singleFileToDiffusers,
} from './weights/single-file.js';
export { type WeightKind, WeightShapeError, type WeightSpec } from './weights/weight-spec.js';
