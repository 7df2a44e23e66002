// The value types a client sends and receives are declared by the descriptors (type-only imports: no
// server code is loaded).
export type { ApiTypes } from '@tiffin/core';
export type {
  BinarySource,
  NDArrayLike,
  NDArraySource,
  NestedList,
  SseMessage,
  TableRow,
  WireReceive,
  WireSend,
} from '@tiffin/core/descriptor';
