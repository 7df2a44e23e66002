import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { InternalServerError } from '../errors/index.js';
import { errorBytes } from './raw-answers.js';
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
  /**
   * The response headers in the order first set, until `respond()` hands them to `writeHead` with the status
   * line; null when the request came through the Koa app, where headers go straight to `res` so that the user's
   * middleware sees and overrides them as in any Koa app.
   */
  private readonly pending: HeaderField[] | null;

  constructor(
    readonly req: IncomingMessage,
    readonly res: ServerResponse,
    path: string,
    options: { headersOnResponse?: boolean } = NO_OPTIONS,
  ) {
    this.method = req.method ?? 'POST';
    this.url = req.url ?? '/';
    this.path = path;
    this.pending = options.headersOnResponse ? null : [];
  }

  /** The query string with its `?` ('' when none). */
  get search(): string {
    const q = this.url.indexOf('?');
    return q >= 0 ? this.url.slice(q) : '';
  }

  /** A response header set so far ('' when absent; repeated values joined with ', '). */
  responseHeader(field: string): string {
    if (this.pending === null) {
      const value = this.res.getHeader(field);
      return value === undefined ? '' : Array.isArray(value) ? value.join(', ') : String(value);
    }
    const entry = this.pending[indexOf(this.pending, field)];
    if (entry === undefined) return '';
    return typeof entry.value === 'string' ? entry.value : entry.value.join(', ');
  }

  /** A request header ('' when absent; repeated values joined with ', '). */
  get(field: string): string {
    const value = this.req.headers[field.toLowerCase()];
    if (value === undefined) return '';
    return Array.isArray(value) ? value.join(', ') : value;
  }

  /** Set a response header, replacing any value it had (in its place, under the name as now given, as Node's `setHeader` does). */
  set(field: string, value: string): void {
    const pending = this.pending;
    if (pending === null) {
      this.res.setHeader(field, value);
      return;
    }
    // Checked now, as `setHeader` would: a bad name or value fails where it was set, not in `respond()`.
    checkHeader(field, value);
    const i = indexOf(pending, field);
    if (i >= 0) pending[i] = { name: field, value };
    else pending.push({ name: field, value });
  }

  /** Add a value to a response header (set-cookie, vary, ...), each value sent as its own line. */
  append(field: string, value: string): void {
    const pending = this.pending;
    if (pending === null) {
      const previous = this.res.getHeader(field);
      if (previous === undefined) this.res.setHeader(field, value);
      else this.res.setHeader(field, [...(Array.isArray(previous) ? previous : [String(previous)]), value]);
      return;
    }
    const i = indexOf(pending, field);
    if (i < 0) {
      this.set(field, value);
      return;
    }
    checkHeader(field, value);
    const previous = pending[i]!.value;
    // The name as last given, as `setHeader` keeps it.
    pending[i] = {
      name: field,
      value: typeof previous === 'string' ? [previous, value] : [...previous, value],
    };
  }

  /** Remove a response header. */
  remove(field: string): void {
    const pending = this.pending;
    if (pending === null) {
      this.res.removeHeader(field);
      return;
    }
    const i = indexOf(pending, field);
    if (i >= 0) pending.splice(i, 1);
  }

  /**
   * Take the headers set on `res` itself (by Koa middleware, whose context writes there) into the headers the
   * exchange holds, so its rules (default content type, content length, no body for 204) see them.
   */
  adoptResponseHeaders(): void {
    if (this.pending === null) return;
    const res = this.res;
    for (const name of res.getHeaderNames()) {
      const value = res.getHeader(name)!;
      res.removeHeader(name);
      if (Array.isArray(value)) for (const v of value) this.append(name, v);
      else this.set(name, String(value));
    }
  }

  vary(field: string): void {
    const current = this.responseHeader('vary');
    const list = current === '' ? [] : current.split(/\s*,\s*/);
    if (list.includes('*') || list.some((f) => f.toLowerCase() === field.toLowerCase())) return;
    this.set('vary', [...list, field].filter(Boolean).join(', '));
  }

  get body(): unknown {
    return this.content;
  }

  /**
   * Bytes, a string or a stream. Content headers are set now, as Koa does, so headers keep Koa's order on the
   * wire: a default content-type, then content-length (bytes) or none (streams, sent chunked).
   */
  set body(value: unknown) {
    if (value instanceof Readable) {
      this.content = value;
      this.remove('content-length');
      if (this.responseHeader('content-type') === '') this.set('content-type', 'application/octet-stream');
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
    if (this.responseHeader('content-type') === '') {
      this.set('content-type', isText ? 'text/plain; charset=utf-8' : 'application/octet-stream');
    }
    // Descriptors' responses carry their content-length already: set it again only when it differs.
    const length = String(bytes.byteLength);
    if (this.responseHeader('content-length') !== length) this.set('content-length', length);
  }

  /**
   * Send status, headers and body. `onError` hears what fails once the answer is settled: a head Node refuses
   * (the client then gets the one 500 body), or a streamed body failing after the headers went out.
   */
  respond(onError: (err: Error) => void): void {
    const res = this.res;
    if (res.headersSent || !res.writable) return;
    const body = this.content;
    if (EMPTY_STATUSES.has(this.status)) {
      this.remove('content-type');
      this.remove('content-length');
      if (this.writeHead(onError)) res.end();
      return;
    }
    if (this.method === 'HEAD') {
      // Headers as for GET (content-length included), no body.
      if (body instanceof Readable) body.destroy();
      if (this.writeHead(onError)) res.end();
      return;
    }
    if (body === null) {
      this.set('content-length', '0');
      if (this.writeHead(onError)) res.end();
      return;
    }
    if (!this.writeHead(onError)) {
      if (body instanceof Readable) body.destroy();
      return;
    }
    if (body instanceof Readable) {
      body.once('error', (err: Error) => {
        onError(err);
        res.destroy(err);
      });
      // A client that goes away stops the stream (and the generator behind it).
      res.once('close', () => body.destroy());
      body.pipe(res);
      return;
    }
    res.end(body);
  }

  /**
   * The status line and headers, in one `writeHead` with the headers as a flat list: Node stores and checks
   * each header once there, instead of once in `setHeader` and again when the head is written. Should Node
   * still refuse the head (its rules and `checkHeader`'s drifting apart), the client gets the one 500 body
   * rather than no answer; false then.
   */
  private writeHead(onError: (err: Error) => void): boolean {
    const pending = this.pending;
    try {
      if (pending === null) {
        this.res.writeHead(this.status);
        return true;
      }
      const flat: Array<string | string[]> = new Array(pending.length * 2);
      for (let i = 0; i < pending.length; i++) {
        const entry = pending[i]!;
        flat[2 * i] = entry.name;
        flat[2 * i + 1] = entry.value;
      }
      this.res.writeHead(this.status, flat as string[]);
      return true;
    } catch (err) {
      onError(err instanceof Error ? err : new Error(String(err)));
      const answer = errorBytes(new InternalServerError('The response could not be written'));
      for (const name of this.res.getHeaderNames()) this.res.removeHeader(name);
      this.res.writeHead(answer.status, answer.headers);
      this.res.end(answer.body);
      return false;
    }
  }
}

/** Node's rules for header names (an HTTP token) and values (no control characters but tab). */
const HEADER_NAME = /^[\^_`a-zA-Z\-0-9!#$%&'*+.|~]+$/;
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

/**
 * Node's `validateHeaderName`/`validateHeaderValue` rules with their errors' codes, checked by two regular
 * expressions: Node's exported checks cost a visible share of a small request (a wrapper per call).
 */
function checkHeader(name: string, value: string): void {
  if (!HEADER_NAME.test(name)) {
    throw Object.assign(new TypeError(`Header name must be a valid HTTP token ["${name}"]`), {
      code: 'ERR_INVALID_HTTP_TOKEN',
    });
  }
  if (!HEADER_VALUE.test(value)) {
    throw Object.assign(new TypeError(`Invalid character in header content ["${name}"]`), {
      code: 'ERR_INVALID_CHAR',
    });
  }
}

const NO_OPTIONS: { headersOnResponse?: boolean } = {};

/** One response header as the exchange holds it: the name as last given, one value or several (one line each). */
interface HeaderField {
  readonly name: string;
  readonly value: string | string[];
}

/** Index of `field` in `fields` (names compared case-insensitively; lists are short: a scan beats a Map). */
function indexOf(fields: readonly HeaderField[], field: string): number {
  for (let i = 0; i < fields.length; i++) {
    const name = fields[i]!.name;
    if (name === field || (name.length === field.length && name.toLowerCase() === field.toLowerCase()))
      return i;
  }
  return -1;
}
