import type { IncomingMessage } from 'node:http';
import {
  BadInput,
  isTiffinError,
  PayloadTooLarge,
  RequestTimeout,
  truncateForMessage,
} from '../errors/index.js';
import type { BodyReservation } from '../runtime/body-budget.js';

/**
 * The one check of a declared body size: a `Content-Length` over `limit` is refused with 413 before a byte is
 * read (the API route's reader, and the mounts before users' middleware may read it).
 */
export function refuseDeclaredOverLimit(declared: string | undefined, limit: number): void {
  if (declared !== undefined && declared !== '' && Number(declared) > limit) {
    throw new PayloadTooLarge(`Request body exceeds the limit of ${limit} bytes`);
  }
}

/**
 * Read a request body whole, bounded by `limit` bytes: over it → 413 (PayloadTooLarge) as soon as the bytes
 * received pass the limit; a client that goes away mid-body, a stream error or a body shorter than its
 * Content-Length → 400 (BadInput); no byte for `idleMs` (a client that declared a body and stalls) → 408 with
 * `connection: close`. With a `reservation`, each chunk is counted against the server's body budget before it
 * is kept; once the budget is full the body is refused: what arrived is dropped, the rest is read and dropped
 * (within `limit` and the stall timeout), and the 503 `BODY_BUDGET_FULL` comes when the body is in, so the
 * client, still sending, reads it (an answer while it sends would reach it as a reset connection). Small and specific (four listeners, one timer), since every
 * API call goes through it.
 */
export function readBody(
  req: IncomingMessage,
  limit: number,
  idleMs = 0,
  reservation?: BodyReservation,
): Promise<Buffer> {
  const declared = req.headers['content-length'];
  try {
    refuseDeclaredOverLimit(declared, limit);
  } catch (err) {
    return Promise.reject(err);
  }
  const expected = declared === undefined ? null : Number(declared);
  if (req.readableEnded) return Promise.reject(new BadInput('The request body was already read'));
  return new Promise<Buffer>((resolve, reject) => {
    let chunks: Buffer[] = [];
    let received = 0;
    let refused: Error | undefined;
    let idle: NodeJS.Timeout | undefined;
    const stalled = () =>
      fail(
        new RequestTimeout(`The request body stalled: no byte for ${idleMs / 1000} seconds`, {
          headers: { connection: 'close' },
        }),
      );
    let settled = false;
    // Armed after the current read: a body that came whole with its headers (most API calls) is complete by
    // then and needs no timer, which would cost a timer-list insert and removal per request.
    if (idleMs > 0) {
      queueMicrotask(() => {
        if (!settled && !req.complete) idle = setTimeout(stalled, idleMs);
      });
    }
    const cleanup = () => {
      settled = true;
      if (idle) clearTimeout(idle);
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
    };
    const fail = (err: Error) => {
      cleanup();
      // Stop reading; Node discards the rest of the body before the next request on the connection.
      req.pause();
      reject(err);
    };
    const onData = (chunk: Buffer) => {
      idle?.refresh();
      received += chunk.length;
      if (received > limit)
        return fail(new PayloadTooLarge(`Request body exceeds the limit of ${limit} bytes`));
      if (refused) return;
      if (reservation) {
        try {
          reservation.reach(received);
        } catch (err) {
          refused = err as Error;
          chunks = [];
          return;
        }
      }
      chunks.push(chunk);
    };
    // No cleanup on success: after 'end' the request emits nothing that matters (its 'close' finds it
    // complete), and removing four listeners is a visible share of a small request.
    const onEnd = () => {
      settled = true;
      if (idle) clearTimeout(idle);
      if (refused) reject(refused);
      else if (expected !== null && received !== expected) {
        reject(
          new BadInput(
            `Request body length does not match Content-Length (${truncateForMessage(String(declared))})`,
          ),
        );
      } else resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, received));
    };
    // Node reports a client gone mid-body as an 'aborted' error (ECONNRESET) before 'close'; the body cap of a
    // service with mounts reports its 413 as a TiffinError.
    const onError = (err: Error) =>
      fail(
        isTiffinError(err)
          ? err
          : new BadInput(
              req.complete
                ? `Could not read the request body: ${err.message}`
                : 'The client aborted the request body',
            ),
      );
    const onClose = () => {
      if (!req.complete) fail(new BadInput('The client aborted the request body'));
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('close', onClose);
  });
}
