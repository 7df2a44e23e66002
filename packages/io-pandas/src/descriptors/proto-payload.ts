import { NotImplementedError, type ProtoPayload } from '@tiffin/core';

/** The typed gRPC member a pandas descriptor reads; raw `serialized_bytes` is not supported. */
export function protoPayload<M extends ProtoPayload>(
  message: ProtoPayload | Uint8Array,
  owner: string,
  field: string,
): M {
  if (message instanceof Uint8Array) {
    throw new NotImplementedError(`${owner} does not read 'serialized_bytes'; send the '${field}' field`);
  }
  return message as M;
}
