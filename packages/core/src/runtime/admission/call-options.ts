import type { Invocation } from '../invocation.js';
import { timeoutOfField, timeoutOfValue } from './client-timeout.js';
import { urgencyOf, urgencyOfValue } from './priority.js';

/** The request fields a client names its urgency and deadline with (docs/spec/io-descriptors.md §10.9). */
export interface CallOptionFields {
  /** RFC 9218 `Priority` (HTTP header, gRPC metadata `priority`). */
  readonly priority: string | undefined;
  /** `Tiffin-Timeout`: seconds. */
  readonly timeout: string | undefined;
  /** Who calls (the peer's address), for the queue's client share. */
  readonly client: string | undefined;
}

/**
 * Set `call`'s urgency, client deadline and client from its request's fields. An unusable `Priority` is
 * ignored (RFC 9218 §4.1); an unusable `Tiffin-Timeout` throws the 400 `INVALID_TIMEOUT`. Sets only what is
 * given, so a call that names neither costs two lookups.
 */
export function applyCallOptions(call: Invocation, fields: CallOptionFields): void {
  if (fields.priority !== undefined) {
    const urgency = urgencyOf(fields.priority);
    if (urgency !== undefined) call.urgency = urgency;
  }
  const timeout = timeoutOfField(fields.timeout);
  if (timeout !== undefined) call.clientTimeout = timeout;
  if (call.api?.admission && fields.client !== undefined) call.client = fields.client;
}

/** A Node request's headers as `applyCallOptions` reads them (a repeated field arrives joined with ', '). */
export function httpCallOptions(req: {
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly socket: { readonly remoteAddress?: string | undefined };
}): CallOptionFields {
  const { priority, 'tiffin-timeout': timeout } = req.headers;
  return {
    priority: typeof priority === 'string' ? priority : priority?.join(', '),
    timeout: typeof timeout === 'string' ? timeout : timeout?.join(', '),
    client: req.socket.remoteAddress,
  };
}

/**
 * The Open Inference Protocol's own fields, over the headers': `parameters.priority` (an integer 0..7, else
 * ignored) and `parameters.timeout` (seconds above 0, else 400 `INVALID_TIMEOUT`).
 */
export function v2CallOptions(call: Invocation, parameters: Readonly<Record<string, unknown>>): void {
  const urgency = urgencyOfValue(parameters.priority);
  if (urgency !== undefined) call.urgency = urgency;
  const timeout = timeoutOfValue(parameters.timeout);
  if (timeout !== undefined) call.clientTimeout = timeout;
}
