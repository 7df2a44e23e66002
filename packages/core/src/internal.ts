/**
 * `@tiffin/core/internal`: the names the other workspace packages (cli, build, io-*, onnx, tfjs, diffusion,
 * client, fuzz, bench, the repository tests) import from core beyond, or besides, the public entry. No stability
 * promise: applications import from `@tiffin/core`. Listed one by one, and only what some package imports:
 * `test/repo/internal-entry.test.ts` fails on a name nobody imports, so a name that is no longer needed goes.
 */
export type { CachedAnswer, ResponseCacheStore } from './cache/response-cache.js';
export { jsonEncoderRules } from './encoding/json-encoder.js';
export { errorAnswer } from './errors/error-answer.js';
export {
  BadInput,
  Cancelled,
  CLIException,
  ConfigError,
  GrpcStatus,
  ImportServiceError,
  InvalidArgument,
  MissingDependencyException,
  NotFound,
  TiffinError,
} from './errors/index.js';
export { truncateForMessage } from './errors/truncate.js';
export { inferenceServiceDefinition, inferenceV2ServiceDefinition } from './grpc/proto.js';
export { GRPC_INPUT_NOT_READABLE } from './grpc/server.js';
export { BufferedHttpRequest } from './http/request.js';
export { getHeader, readResponseBody } from './http/response.js';
export type { ModelInferRequestMessage } from './inference-protocol/grpc-messages.js';
export { descriptorFromSpec, type InputOf, IODescriptor, type OutputOf } from './io/descriptor.js';
export type { FileInput } from './io/descriptors/file.js';
export type { DescriptorSpec, ResponseObject } from './io/openapi.js';
export { schemaModelAdapterFor } from './io/schema-model.js';
export type { NDArraySource, NestedList, SseMessage, TableRow } from './io/wire-types.js';
export { resolveLimits } from './limits/limits.js';
export type {
  FrameworkModule,
  LoadFrameworkModelOptions,
  SaveFrameworkModelOptions,
} from './models/framework.js';
export { saveFrameworkModel } from './models/framework-store.js';
export { addModelApi, deferredModelService, type ModelDescription } from './models/model-service.js';
export type { LoadedModel, ModelRunner } from './models/runner.js';
export { serveRunnerInThread } from './models/runner-thread.js';
export {
  modelOnDisk,
  type ResolvedModel,
  resolveStoredModel,
  siblingModule,
  startModel,
} from './models/start-model.js';
export { type DType, roundToFloat16 } from './ndarray/dtype.js';
export { NDArray } from './ndarray/ndarray.js';
export { buildOpenApiDocument } from './openapi/document.js';
export { applyResponseContext } from './runtime/response-context.js';
export type {
  ModelRepositoryControl,
  RepositoryIndexEntry,
  RepositoryModelState,
} from './service/model-control.js';
export { Service } from './service/service.js';
export type { NamedTensors } from './signature/named-tensors.js';
export {
  applySignatureOverrides,
  type ModelSignature,
  type SignatureOverrides,
  signatureFromTensors,
  type TensorSpec,
} from './signature/signature.js';
export {
  assertNoSymlinkEscape,
  containedPath,
  isInside,
  unsafeRelativePath,
} from './store/contained-path.js';
export { EntryStore, ensureStorable, type StoreEntry } from './store/entry-store.js';
export { CorruptedStoreEntry } from './store/errors.js';
export { contentVersion, humanSize, listFiles, totalSize } from './store/files.js';
export { modelsDir, packagesDir, tiffinHome } from './store/home.js';
export {
  type BaseManifest,
  MANIFEST_FILE,
  readBaseFields,
  readManifest,
  writeManifest,
} from './store/manifest.js';
export { ModelStore } from './store/model-store.js';
export { workerStart } from './threads/worker-start.js';
export { endWorkSpan, tracedWork } from './tracing/work-span.js';
export type { FileMessage } from './wire/proto/messages.js';
export { floatBitsToHalf, fromHalfBits, toHalfBits } from './wire/v2/half-float.js';
