export * from './messages.js';
export {
  GRPC_SERVICE_NAME,
  INFERENCE_V2_SERVICE_NAME,
  inferenceClientConstructor,
  inferenceServiceDefinition,
  inferenceV2ProtoPath,
  inferenceV2ServiceDefinition,
  protoPath,
} from './proto.js';
export * from './server.js';
export { fromValueMessage, toValueMessage } from './struct.js';
