export type { Datatype } from './datatype.js';
export type {
  InferInputTensorMessage,
  ModelInferRequestMessage,
  ModelInferResponseMessage,
  TensorContentsMessage,
} from './grpc-messages.js';
export { type InferenceProtocolDeps, registerInferenceProtocol } from './routes.js';
