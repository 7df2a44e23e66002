// The public contract of @tiffin/core, at most 80 names (test/repo/core-entry.test.ts counts them): the Service
// and its Context; the built-in descriptors and what a custom descriptor is written with (the HTTP exchange,
// batching helpers, OpenAPI schema, protobuf payloads, v2 tensors and wire forms); NDArray; the errors an API
// may throw; serving over HTTP and gRPC with their options and loggers; the model store a service loads its
// models from; the task store contract. Everything else is internal: the other workspace packages share it through
// `@tiffin/core/internal`, which carries no stability promise. Exports stay sorted by path (biome), so this
// list is easy to re-apply.
export {
  BadInput,
  type ErrorBody,
  InternalServerError,
  InvalidArgument,
  isTiffinError,
  NotFound,
  PayloadTooLarge,
  ServiceUnavailable,
  TiffinError,
  TooManyRequests,
  Unauthorized,
  UnprocessableEntity,
} from './errors/index.js';
export {
  type GrpcServerHandle,
  type GrpcServerOptions,
  inferenceClientConstructor,
  inferenceV2ProtoPath,
  protoPath,
  serveGrpc,
} from './grpc/index.js';
export type {
  ProtoField,
  ProtoPayload,
  RequestMessage,
  ResponseMessage,
  StringValueMessage,
} from './grpc/messages.js';
export { BufferedHttpRequest, type HttpRequest } from './http/request.js';
export { buildResponse, type HttpResponse } from './http/response.js';
export type { Tensor, TensorMetadata } from './inference-protocol/tensor.js';
export { arrayItems, type Batching, oneItemPerRequest, rowsAlong } from './io/batching.js';
export { IODescriptor, registerDescriptor } from './io/descriptor.js';
export { File } from './io/descriptors/file.js';
export { JSON, JSONDescriptor } from './io/descriptors/json.js';
export { Multipart } from './io/descriptors/multipart.js';
export { NumpyNdarray } from './io/descriptors/numpy-ndarray.js';
export { Tensors } from './io/descriptors/tensors.js';
export { sseEvent, Text } from './io/descriptors/text.js';
export type { ExampleFile, ExampleFiles } from './io/example-file.js';
export { defaultJsonEncoder, type JsonEncoder, registerJsonEncoder } from './io/json-encoder.js';
export type { SchemaObject } from './io/openapi.js';
export type { WireForm } from './io/wire-form.js';
export type { WireTypes } from './io/wire-types.js';
export { DEFAULT_LIMITS, type LimitOptions } from './limits/index.js';
export { type ModelServiceOptions, modelService } from './models/model-service.js';
export type { LoadedModel } from './models/runner.js';
export { concatenate, splitAlong } from './ndarray/batch.js';
export type { DType } from './ndarray/dtype.js';
export { NDArray } from './ndarray/ndarray.js';
export { type LabelScore, topK } from './ndarray/top-k.js';
export { createApp } from './server/app.js';
export { JsonLineLogger, type Logger, MemoryLogger, silentLogger } from './server/logger.js';
export type { ServerOptions } from './server/options.js';
export { type ServeOptions, type ServerHandle, serve } from './server/serve.js';
export { Context } from './service/context.js';
export { type ApiOptions, type ApiTypes, Service, type ServiceOptions } from './service/service.js';
export { ModelStore, type StoredModel } from './store/model-store.js';
export type { TaskStore } from './tasks/task-store.js';
