// The value types a client sends and receives are declared by the descriptors (type-only imports: no
// server code is loaded).
export type {
  ApiTypes,
  BinarySource,
  NDArrayLike,
  NDArraySource,
  NestedList,
  SseMessage,
  TableRow,
  WireReceive,
  WireSend,
} from '@tiffin/core/internal';
