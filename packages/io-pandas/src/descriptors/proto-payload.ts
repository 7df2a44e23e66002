import { BadInput, type ProtoPayload } from '@tiffin/core';

/**
 * The typed gRPC member a pandas descriptor reads. Raw `serialized_bytes` is not read: the client is told to
 * send the typed field (INVALID_ARGUMENT), where the reference answers INTERNAL for this client's choice.
 */
export function protoPayload<M extends ProtoPayload>(
  message: ProtoPayload | Uint8Array,
  owner: string,
  field: string,
): M {
  if (message instanceof Uint8Array) {
    throw new BadInput(`${owner} does not read 'serialized_bytes'; send the '${field}' field`);
  }
  return message as M;
}
