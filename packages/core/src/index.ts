// The public contract of @tiffin/core, at most 80 names (test/repo/core-entry.test.ts counts them): the Service
// and its Context; the built-in descriptors and what a custom descriptor is written with (the HTTP exchange,
// batching helpers, OpenAPI schema, protobuf payloads, v2 tensors and wire forms); NDArray; the errors an API
// may throw; serving over HTTP and gRPC with their options and loggers; the model store a service loads its
// models from; the task store contract. Everything else is internal: the other workspace packages share it through
// `@tiffin/core/internal`, which carries no stability promise. Exports stay sorted by path (biome), so this
// list is easy to re-apply.

export { Context } from './context/context.js';
export { defaultJsonEncoder, type JsonEncoder, registerJsonEncoder } from './encoding/json-encoder.js';
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
export { inferenceClientConstructor, inferenceV2ProtoPath, protoPath } from './grpc/proto.js';
export { type GrpcServerHandle, type GrpcServerOptions, serveGrpc } from './grpc/server.js';
export { BufferedHttpRequest, type HttpRequest } from './http/request.js';
export { buildResponse, type HttpResponse } from './http/response.js';
export { arrayItems, type Batching, oneItemPerRequest, rowsAlong } from './io/batching.js';
export { IODescriptor, registerDescriptor } from './io/descriptor.js';
export { File } from './io/descriptors/file.js';
export { JSON, JSONDescriptor } from './io/descriptors/json.js';
export { Multipart } from './io/descriptors/multipart.js';
export { NumpyNdarray } from './io/descriptors/numpy-ndarray.js';
export { Tensors } from './io/descriptors/tensors.js';
export { Text } from './io/descriptors/text.js';
export type { ExampleFile, ExampleFiles } from './io/example-file.js';
export type { SchemaObject } from './io/openapi.js';
export type { WireForm } from './io/wire-form.js';
export type { WireTypes } from './io/wire-types.js';
export { DEFAULT_LIMITS, type LimitOptions } from './limits/limits.js';
export { JsonLineLogger, type Logger, MemoryLogger, silentLogger } from './logging/logger.js';
export { type ModelServiceOptions, modelService } from './models/model-service.js';
export type { LoadedModel } from './models/runner.js';
export { concatenate, splitAlong } from './ndarray/batch.js';
export type { DType } from './ndarray/dtype.js';
export { NDArray } from './ndarray/ndarray.js';
export { type LabelScore, topK } from './ndarray/top-k.js';
export { createApp } from './server/app.js';
export type { ServerOptions } from './server/options.js';
export { type ServeOptions, type ServerHandle, serve } from './server/serve.js';
export { type ApiOptions, type ApiTypes, Service, type ServiceOptions } from './service/service.js';
export { ModelStore, type StoredModel } from './store/model-store.js';
export type { TaskStore } from './tasks/task-store.js';
export type {
  ProtoField,
  ProtoPayload,
  RequestMessage,
  ResponseMessage,
  StringValueMessage,
} from './wire/proto/messages.js';
export { sseEvent } from './wire/sse/event.js';
export type { Tensor, TensorMetadata } from './wire/v2/tensor.js';
