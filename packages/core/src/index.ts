// The public contract of @tiffin/core: what services, custom descriptors and their tests use (see docs/).
// Internals shared with the other workspace packages are exported from `@tiffin/core/internal`.
export {
  BadInput,
  CLIException,
  ConfigError,
  type ErrorBody,
  GatewayTimeout,
  GrpcStatus,
  type GrpcStatusCode,
  ImportServiceError,
  InternalServerError,
  InvalidArgument,
  isTiffinError,
  MethodNotAllowed,
  MissingDependencyException,
  NotFound,
  NotImplementedError,
  PayloadTooLarge,
  RequestTimeout,
  ServiceUnavailable,
  TiffinError,
  type TiffinErrorOptions,
  TooManyRequests,
  Unauthorized,
  UnprocessableEntity,
  UnsupportedMediaType,
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
  DataFrameMessage,
  FileMessage,
  MultipartMessage,
  NDArrayMessage,
  PartMessage,
  ProtoField,
  ProtoPayload,
  RequestMessage,
  ResponseMessage,
  SeriesMessage,
  StringValueMessage,
  StructMessage,
  ValueMessage,
} from './grpc/messages.js';
export type { MediaType } from './http/media-type.js';
export {
  BufferedHttpRequest,
  type BufferedHttpRequestInit,
  type FormPart,
  type HttpRequest,
} from './http/request.js';
export {
  type BuildResponseInit,
  buildResponse,
  type Cookie,
  type HttpResponse,
  type ResponseBody,
} from './http/response.js';
export type { Tensor, TensorMetadata } from './inference-protocol/tensor.js';
export {
  arrayItems,
  type BatchInputOf,
  type Batching,
  type BatchOutputOf,
  oneItemPerRequest,
  rowsAlong,
} from './io/batching.js';
export {
  type DescriptorClass,
  type InputOf,
  IODescriptor,
  type OutputOf,
  registerDescriptor,
} from './io/descriptor.js';
export { File, type FileInput, type FileOptions, type FileOutput } from './io/descriptors/file.js';
export { JSON, JSONDescriptor, type JSONOptions } from './io/descriptors/json.js';
export {
  Multipart,
  type MultipartFields,
  type MultipartInput,
  type MultipartOutput,
  type MultipartValue,
} from './io/descriptors/multipart.js';
export {
  NumpyNdarray,
  type NumpyNdarrayOptions,
  type NumpyNdarrayOutput,
} from './io/descriptors/numpy-ndarray.js';
export { Tensors, type TensorsOptions } from './io/descriptors/tensors.js';
export {
  type SseEventInit,
  sseEvent,
  Text,
  type TextChunk,
  type TextOptions,
  type TextOutput,
} from './io/descriptors/text.js';
export type { ExampleFile, ExampleFiles } from './io/example-file.js';
export {
  defaultJsonEncoder,
  type JsonEncoder,
  type JsonEncoderOptions,
  type JsonEncoderRule,
  registerJsonEncoder,
} from './io/json-encoder.js';
export type {
  ComponentsObject,
  DescriptorSpec,
  JsonValue,
  MediaTypeObject,
  RequestBodyObject,
  ResponseObject,
  SchemaObject,
} from './io/openapi.js';
export {
  registerSchemaModelAdapter,
  type SchemaDirection,
  type SchemaIssue,
  type SchemaModelAdapter,
  type SchemaValidation,
} from './io/schema-model.js';
export type { WireForm } from './io/wire-form.js';
export type {
  BinarySource,
  NDArrayLike,
  NDArraySource,
  NestedList,
  SseMessage,
  TableRow,
  WireReceive,
  WireSend,
  WireTypes,
} from './io/wire-types.js';
export { DEFAULT_LIMITS, type LimitOptions, type Limits } from './limits/index.js';
export * from './models/index.js';
export { concatenate, splitAlong } from './ndarray/batch.js';
export { DTypeConversionError, RaggedArrayError } from './ndarray/convert.js';
export type { DType, NDArrayData, TypedArray } from './ndarray/dtype.js';
export { NDArray, type NDArrayElement, type NestedArray } from './ndarray/ndarray.js';
export { type LabelScore, type TopKOptions, topK } from './ndarray/top-k.js';
export { buildOpenApiDocument, type OpenApiDocument } from './openapi/document.js';
export { createApp, type TiffinApp } from './server/app.js';
export {
  type AccessLogEntry,
  JsonLineLogger,
  type LogFields,
  type Logger,
  type LogLevel,
  MemoryLogger,
  silentLogger,
} from './server/logger.js';
export type { CorsOptions, ServerOptions } from './server/options.js';
export { type ServeOptions, type ServerHandle, serve } from './server/serve.js';
export {
  BatchContext,
  Context,
  type LifecycleContext,
  ResponseContext,
  type ServiceState,
} from './service/context.js';
export {
  type ApiFunction,
  type ApiOptions,
  type ApiTypes,
  type ApiTypesMap,
  type BatchApiFunction,
  type BatchApiOptions,
  type BatchOptions,
  type InferenceApi,
  type LifecycleHook,
  type MountOptions,
  type ReadinessCheck,
  Service,
  type ServiceOptions,
  type WithApi,
} from './service/service.js';
export { CorruptedStoreEntry, StoreConflict } from './store/errors.js';
export {
  type ModelManifest,
  ModelStore,
  type SaveModelOptions,
  type StoredModel,
} from './store/model-store.js';
export {
  type PackageManifest,
  PackageStore,
  type StoredPackage,
} from './store/package-store.js';
