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
 * `connection: close`. With a `reservation`, the body's bytes are counted against the server's body budget
 * before they are kept; once the budget is full the body is refused: what arrived is dropped, the rest is read
 * and dropped (within `limit` and the stall timeout), and the 503 `BODY_BUDGET_FULL` comes when the body is in,
 * so the client, still sending, reads it (an answer while it sends would reach it as a reset connection).
 *
 * A body that came in the same read as its headers (most API calls) is taken whole from the request's buffer:
 * Node's parser pushes it right after the request listener returns, so one microtask turn later it is there
 * and needs no listener, promise of its own or timer. Any other body is streamed.
 */
export async function readBody(
  req: IncomingMessage,
  limit: number,
  idleMs = 0,
  reservation?: BodyReservation,
): Promise<Buffer> {
  const declared = req.headers['content-length'];
  refuseDeclaredOverLimit(declared, limit);
  if (req.readableEnded) throw new BadInput('The request body was already read');
  // All of it is in the request's buffer once it holds the declared length (over TCP Node pushes the bytes a
  // little before it marks the message complete), or, for a chunked body, once the message is complete.
  const expected = declared === undefined ? -1 : Number(declared);
  // Only while nothing else reads the request: a flowing one hands its bytes to listeners, which must then be
  // ours from now on.
  if (req.readableFlowing === null && !req.complete && req.readableLength !== expected) await undefined;
  return bodyInBuffer(req, limit, reservation) ?? streamBody(req, limit, idleMs, reservation);
}

/**
 * The body whole from the request's buffer when all of it is there now (`readBody`'s fast path, for a caller
 * that waited the turn itself), else undefined; throws what `readBody` would (413, a length mismatch, 503).
 */
export function bodyInBuffer(
  req: IncomingMessage,
  limit: number,
  reservation?: BodyReservation,
): Buffer | undefined {
  const declared = req.headers['content-length'];
  const expected = declared === undefined ? -1 : Number(declared);
  if (req.readableFlowing !== null || req.readableEnded) return undefined;
  if (!req.complete && req.readableLength !== expected) return undefined;
  const received = req.readableLength;
  if (received > limit) throw new PayloadTooLarge(`Request body exceeds the limit of ${limit} bytes`);
  if (expected >= 0 && received !== expected) throw lengthMismatch(String(declared));
  // Throws the 503 when the budget is full; the bytes stay in the request, which Node drops after the answer.
  reservation?.reach(received);
  return received === 0 ? Buffer.alloc(0) : (req.read() as Buffer);
}

function lengthMismatch(declared: string): BadInput {
  return new BadInput(
    `Request body length does not match Content-Length (${truncateForMessage(String(declared))})`,
  );
}

/** `readBody` for a body still arriving: four listeners and, when `idleMs` is set, the stall timer. */
function streamBody(
  req: IncomingMessage,
  limit: number,
  idleMs: number,
  reservation: BodyReservation | undefined,
): Promise<Buffer> {
  const declared = req.headers['content-length'];
  const expected = declared === undefined ? null : Number(declared);
  return new Promise<Buffer>((resolve, reject) => {
    let chunks: Buffer[] = [];
    let received = 0;
    let refused: Error | undefined;
    const stalled = () =>
      fail(
        new RequestTimeout(`The request body stalled: no byte for ${idleMs / 1000} seconds`, {
          headers: { connection: 'close' },
        }),
      );
    const idle = idleMs > 0 ? setTimeout(stalled, idleMs) : undefined;
    const cleanup = () => {
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
    // complete).
    const onEnd = () => {
      if (idle) clearTimeout(idle);
      if (refused) reject(refused);
      else if (expected !== null && received !== expected) reject(lengthMismatch(String(declared)));
      else resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, received));
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
