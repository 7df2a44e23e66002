import type { IncomingMessage } from 'node:http';
import { PayloadTooLarge, RequestTimeout, type TiffinError } from '../errors/index.js';
import type { BodyReservation } from '../runtime/body-budget.js';

export interface BodyGuardOptions {
  /** Bytes the body may have; more → 413. */
  limit: number;
  /** Milliseconds the body may go without a byte arriving; then 408 with `connection: close`. */
  idleMs: number;
}

/** A request body watched as it arrives, whoever reads it. */
export interface BodyGuard {
  /**
   * Resolves once the whole body arrived from the client (read or not); rejects with the 413 or the 408.
   * Never settles after `stop()`.
   */
  readonly arrived: Promise<void>;
  /** Stop watching (the request was answered without its whole body): no timer, no settling. */
  stop(): void;
}

/**
 * Watch a request body that readers the server does not own (a mounted route's body parser: koa-body,
 * raw-body, formidable) take from the request: the bytes Node's parser hands the request are counted and
 * timed as they arrive, before any reader sees them. Past `limit`, the rest is not taken (the socket stops
 * being read); after `idleMs` without a byte, the body has stalled. Either failure rejects `arrived` and is
 * emitted on the request for a reader waiting on it, which then fails with it (the parsers above reject with
 * the request's error, and formidable removes its partial files). What the server reads itself goes through
 * `readBody`, with the same limit and stall timeout. With a `reservation`, the bytes are counted against the
 * server's body budget as they arrive; once it is full, the body is dropped as it comes and refused with 503
 * `BODY_BUDGET_FULL` when it is in.
 */
export function guardBody(
  req: IncomingMessage,
  { limit, idleMs }: BodyGuardOptions,
  reservation?: BodyReservation,
): BodyGuard {
  // The whole body came before the guard (with the head, or while middleware in front awaited something).
  if (req.complete) return { arrived: Promise.resolve(), stop: () => {} };
  let received = 0;
  let done = false;
  let refused = false;
  /** The budget's refusal, once the body did not fit: the body is read to its end and dropped. */
  let overBudget: TiffinError | undefined;
  const push = req.push;
  let settle: { resolve: () => void; reject: (err: Error) => void } | undefined;
  const arrived = new Promise<void>((resolve, reject) => {
    settle = { resolve, reject };
  });
  const finish = (err?: TiffinError) => {
    if (done) return;
    done = true;
    clearTimeout(idle);
    // Over the limit the wrapper stays, to keep refusing the rest; otherwise Node's own push comes back.
    if (!refused) req.push = push;
    if (!err) return settle!.resolve();
    settle!.reject(err);
    // Emitted on the next turn, outside Node's parser callback; only to a listener (a reader that would
    // otherwise wait for the end), since an 'error' nobody listens to ends the process.
    process.nextTick(() => {
      if (req.listenerCount('error') > 0) req.emit('error', err);
    });
  };
  const idle = setTimeout(
    () =>
      finish(
        new RequestTimeout(`The request body stalled: no byte for ${idleMs / 1000} seconds`, {
          headers: { connection: 'close' },
        }),
      ),
    idleMs,
  );
  req.push = function guardedPush(chunk: unknown, encoding?: BufferEncoding): boolean {
    if (refused) return false;
    if (chunk === null) {
      // A refused body never ends for its reader, which fails with the 503 emitted on the request instead.
      finish(overBudget);
      return overBudget ? true : push.call(this, chunk, encoding);
    }
    idle.refresh();
    received += (chunk as Buffer).length;
    if (received > limit) {
      refused = true;
      finish(new PayloadTooLarge(`Request body exceeds the limit of ${limit} bytes`));
      return false;
    }
    if (overBudget) return true;
    try {
      reservation?.reach(received);
    } catch (err) {
      // Dropped, as the rest will be, until the body is in: then the 503 (see `readBody` for why not now).
      overBudget = err as TiffinError;
      return true;
    }
    return push.call(this, chunk, encoding);
  };
  return {
    arrived,
    stop: () => {
      if (done) return;
      done = true;
      clearTimeout(idle);
      req.push = push;
    },
  };
}
