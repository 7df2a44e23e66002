// @tiffin/onnx: ONNX models in the Tiffin model store, served off the event loop.
export { framework } from './framework.js';
export * from './graph/index.js';
export { type LoadOnnxModelOptions, loadModel, type OnnxModel } from './load-model.js';
export { type OnnxSignature, readOnnxSignature } from './runtime/onnx-signature.js';
export {
  GPU_INSTALL_COMMAND,
  loadOrt,
  type OnnxRuntimeOptions,
  ORT_PROVIDER_NAMES,
  type OrtModule,
  parseOrtProviders,
  parseOrtThreads,
  type ResolvedRuntime,
  resolveRuntime,
} from './runtime/providers.js';
export { MODULE, saveModel } from './save-model.js';
