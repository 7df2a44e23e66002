import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import type { RequestState } from './state.js';

/** Statuses whose responses carry no body. */
const EMPTY_STATUSES: ReadonlySet<number> = new Set([204, 205, 304]);

/**
 * One HTTP request/response pair as the request pipeline and the routes see it: the request's method, path and
 * headers, and the response being built (status, headers, body), sent by `respond()`. Every response of the
 * server goes out through `respond()`, whether the request came straight from Node or through the Koa app
 * (Koa's own response handling is switched off there), so there is one response path. Its rules are Koa's for
 * the bodies the server produces: a default content type and content-length for bytes, chunked streams, no
 * body for 204/205/304 and HEAD.
 */
export class Exchange {
  readonly method: string;
  readonly url: string;
  readonly path: string;
  readonly state = {} as RequestState;
  status = 404;
  private content: Buffer | Readable | null = null;

  constructor(
    readonly req: IncomingMessage,
    readonly res: ServerResponse,
    path: string,
  ) {
    this.method = req.method ?? 'POST';
    this.url = req.url ?? '/';
    this.path = path;
  }

  /** The query string with its `?` ('' when none). */
  get search(): string {
    const q = this.url.indexOf('?');
    return q >= 0 ? this.url.slice(q) : '';
  }

  /** `scheme://host` of the request as the client addressed it ('' without a Host header). */
  get origin(): string {
    const host = this.req.headers.host;
    if (!host) return '';
    const encrypted = (this.req.socket as { encrypted?: boolean }).encrypted === true;
    return `${encrypted ? 'https' : 'http'}://${host}`;
  }

  /** A response header set so far ('' when absent). */
  responseHeader(field: string): string {
    const value = this.res.getHeader(field);
    return value === undefined ? '' : String(value);
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
    // Descriptors' responses carry their content-length already: set it again only when it differs.
    const length = String(bytes.byteLength);
    if (String(res.getHeader('content-length')) !== length) {
      res.setHeader('content-length', length);
    }
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
    if (this.method === 'HEAD') {
      // Headers as for GET (content-length included), no body.
      if (body instanceof Readable) body.destroy();
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
