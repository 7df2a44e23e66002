export { createClient } from './client.js';
export { type ClientErrorKind, isTiffinClientError, TiffinClientError } from './errors.js';
export type { CallOptions, ClientOptions } from './options.js';
export type { ApiInfo, WireForm } from './schema.js';
export type {
  ApiMethod,
  ApisOf,
  ApiTask,
  ClientMethods,
  TaskMethods,
  TaskView,
  TypedClient,
  UntypedApiMethod,
  UntypedClient,
} from './types.js';
export type { BinarySource, NDArrayLike, NDArraySource, NestedList, SseMessage, TableRow } from './wire.js';
