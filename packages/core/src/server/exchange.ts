import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { Context, type ServiceState } from '../context/context.js';
import type { ErrorMapper } from '../errors/error-mapper.js';
import { InternalServerError } from '../errors/index.js';
import { type MediaType, parseMediaType } from '../http/media-type.js';
import { type FormPart, type HttpRequest, parseMultipart } from '../http/request.js';
import type { HttpResponse } from '../http/response.js';
import { DEFAULT_LIMITS, type Limits } from '../limits/limits.js';
import type { BodyBudget, BodyReservation } from '../runtime/body-budget.js';
import type { DeadlineWatch } from '../runtime/deadlines.js';
import type { Invocation } from '../runtime/invocation.js';
import type { LazyAbort } from '../runtime/lazy-abort.js';
import { applyResponseContext } from '../runtime/response-context.js';
import type { HookCall } from '../service/request-hooks.js';
import type { InferenceApi } from '../service/service.js';
import type { CallTrace } from '../tracing/call-trace.js';
import type { InProgress } from './metrics.js';
import { DEFAULT_SERVER_OPTIONS } from './options.js';
import { errorBytes } from './raw-answers.js';
import { bodyInBuffer, readBody, refuseDeclaredOverLimit } from './read-body.js';
import type { RequestState } from './state.js';

/** Statuses whose responses carry no body. */
const EMPTY_STATUSES: ReadonlySet<number> = new Set([204, 205, 304]);

/** How the server reads a request's body: its size limit, its stall timeout, the bounds descriptors check. */
export interface BodyReading {
  readonly maxBodySize: number;
  /** Milliseconds the body may stall between chunks (408 after; 0: no timeout). */
  readonly bodyTimeoutMs: number;
  readonly limits: Readonly<Limits>;
  /** The server's budget of body bytes held across calls (none: unbounded but for `maxBodySize`). */
  readonly budget?: BodyBudget;
}

const DEFAULT_READING: BodyReading = {
  maxBodySize: DEFAULT_SERVER_OPTIONS.maxBodySize,
  bodyTimeoutMs: DEFAULT_SERVER_OPTIONS.bodyTimeout * 1000,
  limits: DEFAULT_LIMITS,
};

/**
 * One HTTP request as the whole server path sees it, one object per request: the request pipeline and the
 * routes (method, path, headers), the runtime's call (`RequestState`: request id, route, abort, deadline
 * bookkeeping), the request descriptors read (`HttpRequest`: headers, query, the body read once within its
 * limit and stall timeout), the `Context` the API function gets (it is its own `ctx.request`), and the response
 * being built (status, headers, body), sent by `respond()`. Every response of the
 * server goes out through `respond()`, whether the request came straight from Node or through the Koa app
 * (Koa's own response handling is switched off there), so there is one response path. Its rules are Koa's for
 * the bodies the server produces: a default content type and content-length for bytes, chunked streams, no
 * body for 204/205/304 and HEAD.
 */
export class Exchange extends Context implements RequestState, HttpRequest, HookCall {
  /** The request descriptors and the API function read: this exchange. */
  override readonly request: HttpRequest = this;
  readonly method: string;
  readonly url: string;
  readonly path: string;
  // The call's state, set by the request pipeline before anything reads it ('' and undefined until then: a
  // request a user's Koa middleware answered before the pipeline ran has none).
  override requestId = '';
  endpoint = 'unmatched';
  api: InferenceApi | undefined = undefined;
  abort!: LazyAbort;
  onClose!: Array<() => void>;
  startedAt = 0;
  timedOut = false;
  override task: Invocation['task'] = undefined;
  bodyReservation: BodyReservation | undefined = undefined;
  trace: CallTrace | undefined = undefined;
  sendUntil: number | undefined = undefined;
  /** The deadline watching the request's work while it runs (the pipeline's; none for an answer given at once). */
  deadlineWatch: DeadlineWatch | undefined = undefined;
  /** Set only by a mount with a deadline of its own (declared: no store on the path of every request). */
  declare ownTimeout: number | undefined;
  /** Set while the request is in a route group with an error mapper: its errors are answered in that shape. */
  declare errorMapper: ErrorMapper | undefined;
  /** The request as counted in progress by the server's metrics (none when they are off). */
  inProgress: InProgress | undefined = undefined;
  status = 404;
  readonly limits: Readonly<Limits>;
  private content: Buffer | Readable | null = null;
  // Made on first use (most requests use none of them): declared, so that constructing an exchange stores nothing.
  declare private headerList: Headers | undefined;
  declare private queryParams: URLSearchParams | undefined;
  declare private mediaType: MediaType | null | undefined;
  declare private bodyRead: Promise<Buffer> | undefined;
  /** The body once the API route has read it, before its descriptor runs (see `HttpRequest.bufferedBody`). */
  bufferedBody: Buffer | undefined = undefined;
  declare private formRead: Promise<FormPart[]> | undefined;
  /**
   * The response headers in the order first set, as `writeHead` takes them: a flat list of names (as last given)
   * and values (one value, or several: one line each), handed to it as is with the status line. Null when the
   * request came through the Koa app, where headers go straight to `res` so that the user's middleware sees and
   * overrides them as in any Koa app.
   */
  private readonly pending: Array<string | string[]> | null;

  constructor(
    readonly req: IncomingMessage,
    readonly res: ServerResponse,
    options: { headersOnResponse?: boolean } = NO_OPTIONS,
    private readonly reading: BodyReading = DEFAULT_READING,
    state: ServiceState = {},
  ) {
    // The request is this exchange itself, set by the field above once `super` returned.
    super(undefined as unknown as HttpRequest, state);
    this.method = req.method ?? 'POST';
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    this.url = url;
    this.path = q >= 0 ? url.slice(0, q) : url;
    this.pending = options.headersOnResponse ? null : [];
    this.limits = reading.limits;
  }

  /** The request headers as a fetch `Headers` (descriptors read them so), copied from Node's on first use. */
  get headers(): Headers {
    this.headerList ??= headersFromNode(this.req);
    return this.headerList;
  }

  get query(): URLSearchParams {
    this.queryParams ??= new URLSearchParams(this.search.slice(1));
    return this.queryParams;
  }

  get contentType(): MediaType | null {
    // From the fetch Headers (repeated content-types joined), as every other HttpRequest reads it.
    if (this.mediaType === undefined) this.mediaType = parseMediaType(this.headers.get('content-type'));
    return this.mediaType;
  }

  /** Aborted when the client goes away or the deadline passes (made on first use). */
  get signal(): AbortSignal {
    return this.abort.signal;
  }

  /** The whole body, read once within the body limit and stall timeout (`read-body.ts`). */
  body(): Promise<Buffer> {
    if (this.bodyRead === undefined && this.bufferedBody !== undefined)
      this.bodyRead = Promise.resolve(this.bufferedBody);
    this.bodyRead ??= readBody(
      this.req,
      this.reading.maxBodySize,
      this.reading.bodyTimeoutMs,
      this.reading.budget?.reservationFor(this),
    );
    return this.bodyRead;
  }

  /**
   * Read the body now if it is whole in the request's buffer (a body that came with its headers is there one
   * microtask turn after the request listener returned): it is then `bufferedBody`. False when it is not (or
   * was read already): `body()` then reads it. Throws what `body()` would reject with.
   */
  takeBody(): boolean {
    if (this.bodyRead !== undefined || this.bufferedBody !== undefined) return false;
    const reading = this.reading;
    refuseDeclaredOverLimit(this.req.headers['content-length'], reading.maxBodySize);
    const whole = bodyInBuffer(this.req, reading.maxBodySize, reading.budget?.reservationFor(this));
    this.bufferedBody = whole;
    return whole !== undefined;
  }

  /** The body as multipart/form-data parts; a part is bounded by the body limit. */
  formData(): Promise<FormPart[]> {
    const size = this.reading.maxBodySize;
    this.formRead ??= this.body().then((body) =>
      parseMultipart(body, this.headers, { maxFileSize: size, maxFieldSize: size }, this.limits),
    );
    return this.formRead;
  }

  /** The query string with its `?` ('' when none). */
  get search(): string {
    const q = this.url.indexOf('?');
    return q >= 0 ? this.url.slice(q) : '';
  }

  /** The temp dir goes with the request: removed when it closes. */
  protected override removeTempDirWhenDone(): void {
    this.onClose.push(() => {
      this.dispose().catch(() => {});
    });
  }

  /** A response header set so far ('' when absent; repeated values joined with ', '). */
  responseHeader(field: string): string {
    if (this.pending === null) {
      const value = this.res.getHeader(field);
      return value === undefined ? '' : Array.isArray(value) ? value.join(', ') : String(value);
    }
    const i = indexOf(this.pending, field);
    if (i < 0) return '';
    const value = this.pending[i + 1]!;
    return typeof value === 'string' ? value : value.join(', ');
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
    this.setChecked(field, value);
  }

  /**
   * `set` for a header the server itself makes from values it already checked (the nosniff header, a request
   * id that is well formed or generated): two regular expressions less on every request.
   */
  setChecked(field: string, value: string): void {
    const pending = this.pending;
    if (pending === null) {
      this.res.setHeader(field, value);
      return;
    }
    const i = indexOf(pending, field);
    if (i >= 0) {
      pending[i] = field;
      pending[i + 1] = value;
    } else pending.push(field, value);
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
    const previous = pending[i + 1]!;
    // The name as last given, as `setHeader` keeps it.
    pending[i] = field;
    pending[i + 1] = typeof previous === 'string' ? [previous, value] : [...previous, value];
  }

  /** Remove a response header. */
  remove(field: string): void {
    const pending = this.pending;
    if (pending === null) {
      this.res.removeHeader(field);
      return;
    }
    const i = indexOf(pending, field);
    if (i >= 0) pending.splice(i, 2);
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

  /** The response body set so far (null: none). */
  get responseBody(): unknown {
    return this.content;
  }

  /**
   * Bytes, a string or a stream. Content headers are set now, as Koa does, so headers keep Koa's order on the
   * wire: a default content-type, then content-length (bytes) or none (streams, sent chunked).
   */
  set responseBody(value: unknown) {
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
   * Take a descriptor's answer as the response, once, with the handler's `ctx.response` (status, headers,
   * cookies) applied to it when the handler set any: status, headers in their order (repeats kept, the first
   * occurrence replacing anything set earlier), then the body as bytes or as a stream sent chunked.
   */
  answer(descriptorAnswer: HttpResponse): void {
    const response =
      this.responseSettings === undefined ? descriptorAnswer : applyResponseContext(descriptorAnswer, this);
    this.status = response.status;
    const headers = response.headers;
    const body = response.body;
    const bytes =
      body === null
        ? Buffer.alloc(0)
        : body instanceof Uint8Array
          ? Buffer.isBuffer(body)
            ? body
            : Buffer.from(body.buffer, body.byteOffset, body.byteLength)
          : null;
    // The answer's own content headers, when right, spare the body setter its lookups.
    const length = bytes === null ? '' : String(bytes.byteLength);
    let typed = false;
    let sized = false;
    for (let i = 0; i < headers.length; i++) {
      const [name, value] = headers[i]!;
      if (name === 'content-type') typed = true;
      else if (name === 'content-length') sized = value === length;
      // Not checked here: the headers go to Node's writeHead, which checks every one of them (a bad one is then
      // answered 500 there); `set` checks for code that sets a header itself, where the error is clearer.
      if (seenBefore(headers, i, name)) this.append(name, value);
      else this.setChecked(name, value);
    }
    if (bytes !== null && typed && sized && this.pending !== null) this.content = bytes;
    else this.responseBody = bytes ?? Readable.from(body as AsyncIterable<Uint8Array>, { objectMode: false });
  }

  /**
   * Send status, headers and body. `onError` hears what fails once the answer is settled: a head Node refuses
   * (the client then gets the one 500 body), or a streamed body failing after the headers went out.
   */
  respond(onError: (err: Error, requestId: string) => void): void {
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
        onError(err, this.requestId);
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
  private writeHead(onError: (err: Error, requestId: string) => void): boolean {
    const pending = this.pending;
    try {
      if (pending === null) {
        this.res.writeHead(this.status);
        return true;
      }
      this.res.writeHead(this.status, pending as string[]);
      return true;
    } catch (err) {
      onError(err instanceof Error ? err : new Error(String(err)), this.requestId);
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

/** Copy Node's raw header list (in order, repeats kept) into a fetch `Headers`. */
export function headersFromNode(req: IncomingMessage): Headers {
  const headers = new Headers();
  const raw = req.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    try {
      headers.append(raw[i]!, raw[i + 1]!);
    } catch {
      // A header value Node accepted but fetch's Headers rejects (odd bytes): descriptors cannot use it anyway.
    }
  }
  return headers;
}

/** Whether `name` occurs in `headers` before index `end` (lists are short: a scan beats a Set). */
function seenBefore(headers: ReadonlyArray<readonly [string, string]>, end: number, name: string): boolean {
  for (let i = 0; i < end; i++) if (headers[i]![0] === name) return true;
  return false;
}

/**
 * Index of the name `field` in the flat list `fields` (names at even indexes, compared case-insensitively; lists
 * are short: a scan beats a Map); its value is at the next index.
 */
function indexOf(fields: ReadonlyArray<string | string[]>, field: string): number {
  for (let i = 0; i < fields.length; i += 2) {
    const name = fields[i] as string;
    if (name === field || (name.length === field.length && name.toLowerCase() === field.toLowerCase()))
      return i;
  }
  return -1;
}
