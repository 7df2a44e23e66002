import { Readable } from 'node:stream';
import type { ParameterizedContext } from 'koa';
import type { Exchange } from '../exchange.js';

/**
 * Whether mounted middleware answered on its Koa context: a body set (Koa then makes the status 200, or 204
 * for an explicit null), or a status other than the one the context had when the mounts were done with it
 * (Koa's starting 404, or the status of the routes' answer).
 */
export function koaAnswered(ctx: ParameterizedContext, passedStatus: number): boolean {
  return ctx.body != null || ctx.status !== passedStatus;
}

/**
 * Hand a mounted middleware's answer to the exchange, which writes every response of the server: the status,
 * and the body in one of the forms the exchange sends (bytes or a Node stream). Koa's body setter already put
 * the content type and length on the response, which the exchange of a service with mounts shares. The forms
 * are those Koa's own `respond` sends: a string, bytes, a Node stream, a web stream, Blob or Response, and
 * any other value as JSON; no body is Koa's status message as text.
 */
export function takeKoaAnswer(ctx: ParameterizedContext, exchange: Exchange): void {
  // A middleware that replaced a route's answer after `await next()`: the route's stream is not sent.
  const replaced = exchange.responseBody;
  if (replaced instanceof Readable && replaced !== ctx.body) replaced.destroy();
  exchange.status = ctx.status;
  exchange.adoptResponseHeaders();
  const body: unknown = ctx.body;
  if (body == null) {
    // An explicit `ctx.body = null` made the status 204, which the exchange sends without a body.
    if (exchange.responseHeader('content-type') === '')
      exchange.set('content-type', 'text/plain; charset=utf-8');
    exchange.responseBody = ctx.message || String(ctx.status);
  } else if (typeof body === 'string' || Buffer.isBuffer(body) || body instanceof Readable) {
    exchange.responseBody = body;
  } else if (body instanceof Uint8Array) {
    exchange.responseBody = Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  } else if (body instanceof ReadableStream) {
    exchange.responseBody = Readable.fromWeb(body as import('node:stream/web').ReadableStream);
  } else if (body instanceof Blob) {
    exchange.responseBody = Readable.fromWeb(body.stream() as import('node:stream/web').ReadableStream);
  } else if (body instanceof Response) {
    exchange.responseBody = body.body
      ? Readable.fromWeb(body.body as import('node:stream/web').ReadableStream)
      : null;
  } else {
    exchange.responseBody = JSON.stringify(body);
  }
}
