// @tiffin/diffusion/tfjs — the TensorFlow.js engine's public names. Loading this entry loads TF.js, an optional
// peer dependency: `npm install @tensorflow/tfjs@4.22.0 @tensorflow/tfjs-backend-wasm@4.22.0` first.

// Named for its package: `@tiffin/build` has a `selectBackend` of its own (the container tool).
export { selectBackend as selectTfjsBackend, WEBGPU_PACKAGES } from './backend.js';
export { ClipTextEncoder } from './engines/tfjs/clip-text-encoder.js';
export { UNet2DConditionModel } from './engines/tfjs/unet.js';
export { type UNetActivations, type UNetStage, unetStages } from './engines/tfjs/unet-stages.js';
export { AutoencoderKL } from './engines/tfjs/vae.js';
export { loadComponents } from './pipeline/components.js';
export { PipelineWeightTarget } from './pipeline/weight-target.js';
export { WeightStore } from './weights/store.js';
