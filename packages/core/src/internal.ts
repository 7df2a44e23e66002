/**
 * `@tiffin/core/internal`: everything the workspace packages (cli, io-*, diffusion, client, bench, fuzz) share
 * with core beyond the public contract, i.e. the public names plus the internals (the stores'
 * helpers, dtype tables, JSON parsing, gRPC plumbing, ...). No stability promise: applications import from
 * `@tiffin/core`.
 */
export * from './errors/index.js';
export * from './grpc/index.js';
export * from './http/media-type.js';
export * from './http/request.js';
export * from './http/response.js';
export { floatBitsToHalf, fromHalfBits, toHalfBits } from './inference-protocol/half-float.js';
export * from './inference-protocol/index.js';
export { columnsFromTable, columnTensorMetadata, tableFromColumns } from './inference-protocol/table.js';
export type { Tensor, TensorMetadata } from './inference-protocol/tensor.js';
export {
  arrayItems,
  type BatchInputOf,
  type Batching,
  type BatchOutputOf,
  oneItemPerRequest,
  rowsAlong,
} from './io/batching.js';
export { bodyRequest } from './io/body-tensor.js';
export * from './io/descriptor.js';
export * from './io/descriptors/file.js';
export { JSON, JSONDescriptor, type JSONOptions } from './io/descriptors/json.js';
export * from './io/descriptors/multipart.js';
export * from './io/descriptors/numpy-ndarray.js';
export { Tensors, type TensorsOptions } from './io/descriptors/tensors.js';
export * from './io/descriptors/text.js';
export * from './io/example-file.js';
export { JsonFloat } from './io/json/json-float.js';
export { type JsonParseOptions, JsonSyntaxError, parseJson, parseJsonBytes } from './io/json/parse.js';
export { writeJson } from './io/json/write.js';
export * from './io/json-encoder.js';
export * from './io/openapi.js';
export * from './io/schema-model.js';
export type { WireForm } from './io/wire-form.js';
export * from './io/wire-types.js';
export * from './limits/index.js';
export { type FrameworkSave, readFrameworkMetadata, saveFrameworkModel } from './models/framework-store.js';
export * from './models/index.js';
export { defaultInstances, RunnerPool, type RunnerPoolOptions } from './models/runner-pool.js';
export { type RunnerLoader, serveRunnerInThread } from './models/runner-thread.js';
export { inferBatchable, readSignature, signatureFromTensors } from './models/signature.js';
export {
  modelOnDisk,
  type ResolvedModel,
  resolveStoredModel,
  type StartModelOptions,
  siblingModule,
  startModel,
} from './models/start-model.js';
export { checkInputs, checkTensor } from './models/tensor-check.js';
export { concatenate, splitAlong } from './ndarray/batch.js';
export * from './ndarray/index.js';
export * from './openapi/index.js';
export { httpCodec } from './runtime/http-codec.js';
export { applyResponseContext } from './runtime/response-context.js';
export { Runtime, type RuntimeOptions, type TransportCodec } from './runtime/runtime.js';
export { TaskRunner } from './runtime/task-runner.js';
export * from './server/index.js';
export * from './service/context.js';
export * from './service/service.js';
export * from './store/index.js';
export * from './tasks/index.js';
export * from './threads/index.js';
