import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import type { RequestState } from './state.js';

/**
 * What the request pipeline and the API handler use of a request/response pair: the subset of Koa's context
 * they need. A Koa context is one; `DirectExchange` is the other, for API calls served without Koa's
 * per-request machinery (see `DirectExchange`).
 */
export interface Exchange {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly method: string;
  /** Path and query, as received. */
  readonly url: string;
  readonly path: string;
  readonly state: RequestState;
  status: number;
  /** Bytes, a string or a readable stream; sent once the pipeline is done. */
  body: unknown;
  /** A request header ('' when absent). */
  get(field: string): string;
  set(field: string, value: string): void;
  append(field: string, value: string): void;
  vary(field: string): void;
  readonly response: { get(field: string): unknown };
}

/** Statuses whose responses carry no body. */
const EMPTY_STATUSES: ReadonlySet<number> = new Set([204, 205, 304]);

/**
 * An Exchange over Node's request/response, for `POST /<api>`: the server answers API calls with it and leaves
 * every other request to Koa. Koa's context objects, middleware composition and response helpers cost about a
 * third of a small JSON request; the pipeline does the rest itself. `respond()` sends the result the way Koa's
 * own respond does for the bodies the pipeline produces.
 */
export class DirectExchange implements Exchange {
  readonly method: string;
  readonly url: string;
  readonly path: string;
  readonly state = {} as RequestState;
  status = 404;
  private content: Buffer | Readable | null = null;
  private responseView: { get(field: string): unknown } | undefined;

  constructor(
    readonly req: IncomingMessage,
    readonly res: ServerResponse,
    path: string,
  ) {
    this.method = req.method ?? 'POST';
    this.url = req.url ?? '/';
    this.path = path;
  }

  /** Response headers as Koa's `ctx.response` shows them (read by the access log only). */
  get response(): { get(field: string): unknown } {
    const res = this.res;
    this.responseView ??= { get: (field: string): unknown => res.getHeader(field) };
    return this.responseView;
  }

  get(field: string): string {
    const value = this.req.headers[field.toLowerCase()];
    if (value === undefined) return '';
    return Array.isArray(value) ? value.join(', ') : value;
  }

  set(field: string, value: string): void {
    this.res.setHeader(field, value);
  }

  append(field: string, value: string): void {
    const previous = this.res.getHeader(field);
    if (previous === undefined) this.res.setHeader(field, value);
    else this.res.setHeader(field, [...(Array.isArray(previous) ? previous : [String(previous)]), value]);
  }

  vary(field: string): void {
    const current = this.res.getHeader('vary');
    const list = current === undefined ? [] : String(current).split(/\s*,\s*/);
    if (list.includes('*') || list.some((f) => f.toLowerCase() === field.toLowerCase())) return;
    this.res.setHeader('vary', [...list, field].filter(Boolean).join(', '));
  }

  get body(): unknown {
    return this.content;
  }

  /**
   * Bytes, a string or a stream. Content headers are set now, as Koa does, so headers keep Koa's order on the
   * wire: a default content-type, then content-length (bytes) or none (streams, sent chunked).
   */
  set body(value: unknown) {
    const res = this.res;
    if (value instanceof Readable) {
      this.content = value;
      res.removeHeader('content-length');
      if (!res.hasHeader('content-type')) res.setHeader('content-type', 'application/octet-stream');
      return;
    }
    const isText = typeof value === 'string';
    const bytes = isText
      ? Buffer.from(value, 'utf8')
      : value === null || value === undefined
        ? null
        : (value as Buffer);
    this.content = bytes;
    if (bytes === null) return;
    if (!res.hasHeader('content-type')) {
      res.setHeader('content-type', isText ? 'text/plain; charset=utf-8' : 'application/octet-stream');
    }
    res.setHeader('content-length', bytes.byteLength);
  }

  /** Send status, headers and body. `onStreamError` hears a streamed body failing after the headers went out. */
  respond(onStreamError: (err: Error) => void): void {
    const res = this.res;
    if (res.headersSent || !res.writable) return;
    res.statusCode = this.status;
    const body = this.content;
    if (EMPTY_STATUSES.has(this.status)) {
      res.removeHeader('content-type');
      res.removeHeader('content-length');
      res.end();
      return;
    }
    if (body === null) {
      res.setHeader('content-length', 0);
      res.end();
      return;
    }
    if (body instanceof Readable) {
      body.once('error', (err: Error) => {
        onStreamError(err);
        res.destroy(err);
      });
      // A client that goes away stops the stream (and the generator behind it).
      res.once('close', () => body.destroy());
      body.pipe(res);
      return;
    }
    res.end(body);
  }
}
