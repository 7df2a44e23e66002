import { Readable } from 'node:stream';
import type { HttpResponse } from '../http/response.js';
import type { Exchange } from './exchange.js';

/**
 * Copy a descriptor's HttpResponse onto the exchange: status, headers in their order (repeats kept), then the body as
 * bytes or as a stream sent chunked.
 */
export function writeResponse(ctx: Exchange, response: HttpResponse): void {
  ctx.status = response.status;
  const body = response.body;
  const headers = response.headers;
  for (let i = 0; i < headers.length; i++) {
    const [name, value] = headers[i]!;
    // The first occurrence replaces anything set earlier; later ones (set-cookie, ...) append.
    if (seenBefore(headers, i, name)) ctx.append(name, value);
    else ctx.set(name, value);
  }
  if (body === null) {
    ctx.responseBody = Buffer.alloc(0);
  } else if (body instanceof Uint8Array) {
    ctx.responseBody = Buffer.isBuffer(body)
      ? body
      : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  } else {
    ctx.responseBody = Readable.from(body, { objectMode: false });
  }
}

/** Whether `name` occurs in `headers` before index `end` (lists are short: a scan beats a Set). */
function seenBefore(headers: ReadonlyArray<readonly [string, string]>, end: number, name: string): boolean {
  for (let i = 0; i < end; i++) if (headers[i]![0] === name) return true;
  return false;
}
