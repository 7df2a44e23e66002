import type { IncomingMessage } from 'node:http';
import { PayloadTooLarge } from '../../errors/index.js';

/**
 * Bound a chunked request body for readers the server does not own (a mounted route's body parser): once the
 * bytes Node's parser hands the request pass `limit`, the rest is not taken (the socket stops being read) and
 * the request emits a `PayloadTooLarge` error, which `koa-body`, `raw-body` and `formidable` reject with, so
 * the route's parse fails with the 413. A body with a Content-Length needs none of this: the pipeline checks
 * the declared size, and Node's parser stops at it.
 */
export function capChunkedBody(req: IncomingMessage, limit: number): void {
  let received = 0;
  let refused = false;
  const push = req.push;
  req.push = function boundedPush(chunk: unknown, encoding?: BufferEncoding): boolean {
    if (chunk === null || refused) return refused ? false : push.call(this, chunk, encoding);
    received += (chunk as Buffer).length;
    if (received <= limit) return push.call(this, chunk, encoding);
    refused = true;
    // Emitted on the next turn, outside Node's parser callback; only to a listener (a reader that would
    // otherwise wait for the end), since an 'error' nobody listens to ends the process.
    process.nextTick(() => {
      if (req.listenerCount('error') > 0) {
        req.emit('error', new PayloadTooLarge(`Request body exceeds the limit of ${limit} bytes`));
      }
    });
    return false;
  };
}
