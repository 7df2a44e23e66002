// `@tiffin/core/descriptor`: what an IO descriptor of another package (or of a user) is written with, beyond the
// public entry, which already carries `IODescriptor`, the HTTP exchange (`HttpRequest`, `buildResponse`), the
// batching helpers (`rowsAlong`, `arrayItems`, `oneItemPerRequest`), the proto payloads, the v2 tensors and
// `NDArray`. The two entries together are the descriptor contract that io-image, io-pandas, io-json and the
// client build on; none of them needs `@tiffin/core/internal`. At most 44 names
// (`test/repo/core-entry.test.ts` counts them).

export { writeJson } from './encoding/json-write.js';
export { MissingDependencyException } from './errors/index.js';
export { truncateForMessage } from './errors/truncate.js';
export { type MediaType, mediaTypeMatches, parseMediaType } from './http/media-type.js';
export { bodyRequest } from './io/body-tensor.js';
export type { JSONOptions } from './io/descriptors/json.js';
export type { DescriptorSpec, RequestBodyObject, ResponseObject } from './io/openapi.js';
export {
  registerSchemaModelAdapter,
  type SchemaDirection,
  type SchemaIssue,
  type SchemaModelAdapter,
  type SchemaValidation,
} from './io/schema-model.js';
export type {
  BinarySource,
  NDArrayLike,
  NDArraySource,
  NestedList,
  SseMessage,
  TableRow,
  WireReceive,
  WireSend,
} from './io/wire-types.js';
export { checkJsonDepth } from './limits/depth.js';
export type { Limits } from './limits/limits.js';
export { siblingModule } from './models/start-model.js';
export {
  canCastSameKind,
  DTYPES,
  type DTypeKind,
  dtypeKind,
  integerRange,
  isIntegerDType,
  roundToFloat16,
} from './ndarray/dtype.js';
export { TaskPool } from './threads/task-pool.js';
export { serveTasksInThread, Transferring } from './threads/task-thread.js';
export type { DataFrameMessage, FileMessage, SeriesMessage } from './wire/proto/messages.js';
export { type Datatype, datatypeOf } from './wire/v2/datatype.js';
