import { Readable } from 'node:stream';
import type Koa from 'koa';
import type { HttpResponse } from '../http/response.js';

/**
 * Copy a descriptor's HttpResponse onto Koa: status, headers in their order (repeats kept), then the body as
 * bytes or as a stream sent chunked.
 */
export function writeResponse(ctx: Koa.Context, response: HttpResponse): void {
  ctx.status = response.status;
  const seen = new Set<string>();
  for (const [name, value] of response.headers) {
    // The first occurrence replaces anything set earlier; later ones (set-cookie, ...) append.
    if (seen.has(name)) ctx.append(name, value);
    else {
      ctx.set(name, value);
      seen.add(name);
    }
  }
  const body = response.body;
  if (body === null) {
    ctx.body = Buffer.alloc(0);
  } else if (body instanceof Uint8Array) {
    ctx.body = Buffer.isBuffer(body) ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  } else {
    ctx.body = Readable.from(body, { objectMode: false });
  }
}
