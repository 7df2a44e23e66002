// The model-serving contract shared by the framework modules (@tiffin/onnx, @tiffin/tfjs): see README.md here.
export type {
  FrameworkModelMetadata,
  FrameworkModule,
  LoadFrameworkModelOptions,
  SaveFrameworkModelOptions,
} from './framework.js';
export { ModelRunFailed } from './model-errors.js';
export {
  type DeferredModelServiceOptions,
  deferredModelService,
  type ModelDescription,
  type ModelServiceOptions,
  modelService,
} from './model-service.js';
export type { LoadedModel, ModelRunner, NamedTensors } from './runner.js';
export {
  applySignatureOverrides,
  describeTensor,
  type ModelSignature,
  type SignatureOverrides,
  type TensorOverride,
  type TensorSpec,
} from './signature.js';
export { SignatureNdarray } from './signature-ndarray.js';
