import { parseJsonBytes } from '../../encoding/json-parse.js';
import { BadInput } from '../../errors/index.js';
import { nestsDeeperThan } from '../../limits/depth.js';
import type { Limits } from '../../limits/limits.js';
import type { ProtoPayload, ValueMessage } from './messages.js';
import { fromValueMessage } from './struct.js';

/**
 * The JSON value of a gRPC input: JSON bytes (`serialized_bytes`) or a `google.protobuf.Value`, held to the
 * same depth bound either way. `invalid` starts the 400's message (`Invalid JSON input received`).
 */
export function jsonFromProto(
  message: ProtoPayload | Uint8Array,
  limits: Readonly<Limits>,
  invalid: string,
  exact = false,
): unknown {
  if (message instanceof Uint8Array) {
    try {
      return parseJsonBytes(message, { exact, maxDepth: limits.maxDepth });
    } catch (err) {
      throw new BadInput(`${invalid}: ${(err as Error).message}`);
    }
  }
  const value = fromValueMessage(message as ValueMessage);
  if (nestsDeeperThan(value, limits.maxDepth))
    throw new BadInput(`${invalid}: nests deeper than ${limits.maxDepth} levels`);
  return value;
}
