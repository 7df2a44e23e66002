export * from './messages.js';
export {
  GRPC_SERVICE_NAME,
  inferenceClientConstructor,
  inferenceServiceDefinition,
  protoPath,
} from './proto.js';
export * from './server.js';
export { fromValueMessage, toValueMessage } from './struct.js';
