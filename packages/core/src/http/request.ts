import busboy from 'busboy';
import { BadInput, PayloadTooLarge, truncateForMessage } from '../errors/index.js';
import { DEFAULT_LIMITS, type Limits } from '../limits/limits.js';
import { type MediaType, parseMediaType } from './media-type.js';

/** One part of a multipart/form-data body, in body order. */
export interface FormPart {
  readonly name: string;
  /** Present (possibly empty) when the part's Content-Disposition had a `filename` parameter. */
  readonly filename: string | undefined;
  readonly isFile: boolean;
  /** The part's own headers (lower-cased names). Plain fields have none but content-disposition. */
  readonly headers: Headers;
  readonly contentType: MediaType | null;
  readonly data: Buffer;
}

/** Byte sizes of multipart parts (the server derives them from its body limit; part counts and names are `Limits`). */
export interface MultipartLimits {
  /** Max bytes in one file part. */
  maxFileSize: number;
  /** Max bytes in one plain field. */
  maxFieldSize: number;
}

export const DEFAULT_MULTIPART_LIMITS: MultipartLimits = {
  maxFileSize: 100 * 1024 * 1024,
  maxFieldSize: 16 * 1024 * 1024,
};

/**
 * The request as descriptors see it: transport-neutral (the Koa server, Multipart sub-requests and tests
 * all build one), with the body read lazily and at most once.
 */
export interface HttpRequest {
  readonly method: string;
  /** Path plus query string, as received. */
  readonly url: string;
  readonly path: string;
  readonly headers: Headers;
  readonly query: URLSearchParams;
  /** Parsed Content-Type, or null when missing/malformed. */
  readonly contentType: MediaType | null;
  /** Aborted when the client goes away. */
  readonly signal: AbortSignal;
  /** The server's bounds on input (nesting depth, multipart shape): descriptors check what they parse. */
  readonly limits: Readonly<Limits>;
  /** The whole body (bounded by the server's body limit; over it → PayloadTooLarge). */
  body(): Promise<Buffer>;
  /**
   * The whole body when it is already read (an API call's, before its descriptor runs; a request built from
   * bytes), else undefined: a descriptor may decode it at once instead of awaiting `body()`.
   */
  readonly bufferedBody?: Buffer;
  /** The body as multipart/form-data parts, in body order. Malformed → BadInput. */
  formData(): Promise<FormPart[]>;
}

export interface BufferedHttpRequestInit {
  method?: string;
  url?: string;
  /** The headers, or a function building them on first use (a fetch `Headers` costs ~1 µs to fill). */
  headers?: ConstructorParameters<typeof Headers>[0] | Headers | (() => Headers);
  /** The body, or a function reading it once (e.g. from a socket). */
  body?: Buffer | Uint8Array | string | (() => Promise<Buffer>);
  /** The abort signal, or a function creating it on first use (an AbortSignal costs a few µs). */
  signal?: AbortSignal | (() => AbortSignal);
  multipartLimits?: Partial<MultipartLimits>;
  /** Input bounds (default `DEFAULT_LIMITS`). */
  limits?: Readonly<Limits>;
  /** For sub-requests: the form a child descriptor sees when it asks for one. */
  form?: FormPart[];
}

/** The standard HttpRequest implementation. */
export class BufferedHttpRequest implements HttpRequest {
  readonly method: string;
  readonly url: string;
  readonly path: string;
  readonly limits: Readonly<Limits>;
  private headerSource: Headers | (() => Headers);
  private queryParams: URLSearchParams | undefined;
  private parsedContentType: MediaType | null | undefined;
  private signalSource: AbortSignal | (() => AbortSignal) | undefined;
  private readonly readBody: () => Promise<Buffer>;
  private bodyPromise: Promise<Buffer> | undefined;
  readonly bufferedBody: Buffer | undefined;
  private formPromise: Promise<FormPart[]> | undefined;
  private readonly limitOverrides: Partial<MultipartLimits> | undefined;
  private mergedLimits: MultipartLimits | undefined;

  constructor(init: BufferedHttpRequestInit = {}) {
    this.method = (init.method ?? 'POST').toUpperCase();
    this.url = init.url ?? '/';
    const q = this.url.indexOf('?');
    this.path = q >= 0 ? this.url.slice(0, q) : this.url;
    const headers = init.headers;
    this.headerSource =
      headers instanceof Headers
        ? headers
        : typeof headers === 'function'
          ? headers
          : new Headers(headers as ConstructorParameters<typeof Headers>[0]);
    this.signalSource = init.signal;
    this.limitOverrides = init.multipartLimits;
    this.limits = init.limits ?? DEFAULT_LIMITS;
    const body = init.body;
    if (typeof body === 'function') {
      this.readBody = body;
      this.bufferedBody = undefined;
    } else {
      const buf =
        body === undefined
          ? Buffer.alloc(0)
          : typeof body === 'string'
            ? Buffer.from(body, 'utf8')
            : Buffer.from(body);
      this.readBody = async () => buf;
      this.bufferedBody = buf;
    }
    if (init.form) this.formPromise = Promise.resolve(init.form);
  }

  /** Multipart sizes, merged with the defaults on first use (most requests are not multipart). */
  private get multipartSizes(): MultipartLimits {
    this.mergedLimits ??= { ...DEFAULT_MULTIPART_LIMITS, ...this.limitOverrides };
    return this.mergedLimits;
  }

  get headers(): Headers {
    if (typeof this.headerSource === 'function') this.headerSource = this.headerSource();
    return this.headerSource;
  }

  get query(): URLSearchParams {
    if (!this.queryParams) {
      const q = this.url.indexOf('?');
      this.queryParams = new URLSearchParams(q >= 0 ? this.url.slice(q + 1) : '');
    }
    return this.queryParams;
  }

  get contentType(): MediaType | null {
    if (this.parsedContentType === undefined) {
      this.parsedContentType = parseMediaType(this.headers.get('content-type'));
    }
    return this.parsedContentType;
  }

  get signal(): AbortSignal {
    if (typeof this.signalSource !== 'object') {
      this.signalSource = this.signalSource ? this.signalSource() : new AbortController().signal;
    }
    return this.signalSource;
  }

  body(): Promise<Buffer> {
    this.bodyPromise ??= this.readBody();
    return this.bodyPromise;
  }

  formData(): Promise<FormPart[]> {
    this.formPromise ??= this.body().then((buf) =>
      parseMultipart(buf, this.headers, this.multipartSizes, this.limits),
    );
    return this.formPromise;
  }

  /** A request sharing method, url and signal, with other headers/body (Multipart sub-requests). */
  derive(init: { headers?: Headers; body?: Buffer; form?: FormPart[] }): BufferedHttpRequest {
    return new BufferedHttpRequest({
      method: this.method,
      url: this.url,
      headers: init.headers ?? (() => this.headers),
      body: init.body ?? (() => this.body()),
      signal: () => this.signal,
      multipartLimits: this.multipartSizes,
      limits: this.limits,
      form: init.form,
    });
  }
}

/**
 * Parse a multipart/form-data body. Every failure is the client's: BadInput (413 for sizes and part counts).
 * Every stream busboy hands out gets an error listener: an error it emits on a file stream (a body that ends
 * inside a file part) would otherwise escape as an uncaught exception and end the process.
 */
export function parseMultipart(
  body: Buffer,
  headers: Headers,
  sizes: MultipartLimits,
  limits: Readonly<Limits> = DEFAULT_LIMITS,
): Promise<FormPart[]> {
  const contentType = headers.get('content-type') ?? '';
  const mt = parseMediaType(contentType);
  if (mt?.essence !== 'multipart/form-data') {
    return Promise.reject(
      new BadInput(
        `Expected a multipart/form-data body, got Content-Type '${truncateForMessage(contentType || '(none)')}'`,
      ),
    );
  }
  if (!mt.parameters.boundary) {
    return Promise.reject(new BadInput('multipart/form-data Content-Type has no boundary parameter'));
  }
  const maxParts = limits.maxParts;
  return new Promise<FormPart[]>((resolve, reject) => {
    const parts: FormPart[] = [];
    let failed = false;
    let parser: busboy.Busboy;
    const fail = (err: Error) => {
      if (failed) return;
      failed = true;
      reject(err);
    };
    const malformed = (err: Error) =>
      fail(new BadInput(`Invalid multipart request: ${truncateForMessage(err.message)}`));
    try {
      parser = busboy({
        headers: { 'content-type': contentType },
        preservePath: true,
        defParamCharset: 'utf8',
        limits: {
          parts: maxParts,
          fileSize: sizes.maxFileSize,
          fieldSize: sizes.maxFieldSize,
          fieldNameSize: limits.maxPartNameLength,
        },
      });
    } catch (err) {
      malformed(err as Error);
      return;
    }
    const checkNames = (name: string | undefined, filename: string | undefined): boolean => {
      if (name !== undefined && name.length > limits.maxPartNameLength) {
        fail(new BadInput(`A multipart part name is longer than ${limits.maxPartNameLength} characters`));
        return false;
      }
      if (filename !== undefined && filename.length > limits.maxFileNameLength) {
        fail(new BadInput(`A multipart file name is longer than ${limits.maxFileNameLength} characters`));
        return false;
      }
      return true;
    };
    parser.on('file', (name, stream, info) => {
      stream.on('error', malformed);
      if (!checkNames(name, info.filename)) {
        stream.resume();
        return;
      }
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('limit', () =>
        fail(
          new PayloadTooLarge(
            `Multipart file part '${truncateForMessage(name)}' exceeds ${sizes.maxFileSize} bytes`,
          ),
        ),
      );
      stream.on('end', () => {
        // A throw in a stream listener would be uncaught: whatever goes wrong here is answered instead.
        try {
          const filename = info.filename ?? '';
          parts.push({
            name,
            filename,
            isFile: true,
            headers: partHeaders(name, filename, info.mimeType),
            contentType: parseMediaType(info.mimeType),
            data: Buffer.concat(chunks),
          });
        } catch (err) {
          malformed(err as Error);
        }
      });
    });
    parser.on('field', (name, value, info) => {
      if (!checkNames(name, undefined)) return;
      if (info.nameTruncated) {
        fail(new BadInput(`A multipart part name is longer than ${limits.maxPartNameLength} characters`));
        return;
      }
      if (info.valueTruncated) {
        fail(
          new PayloadTooLarge(
            `Multipart field '${truncateForMessage(name)}' exceeds ${sizes.maxFieldSize} bytes`,
          ),
        );
        return;
      }
      let headers: Headers;
      try {
        headers = partHeaders(name, undefined, undefined);
      } catch (err) {
        malformed(err as Error);
        return;
      }
      parts.push({
        name,
        filename: undefined,
        isFile: false,
        headers,
        contentType: null,
        data: Buffer.from(value, 'utf8'),
      });
    });
    parser.on('partsLimit', () =>
      fail(new PayloadTooLarge(`Multipart body has more than ${maxParts} parts`)),
    );
    parser.on('error', malformed);
    parser.on('close', () => {
      if (!failed) resolve(parts);
    });
    parser.end(body);
  });
}

/**
 * A part's headers as a fetch `Headers` (values there must be ByteStrings). Names outside plain ASCII are
 * written with the RFC 5987 `*=UTF-8''` form, so the header stays valid; the part's `filename` keeps the
 * UTF-8 string.
 */
function partHeaders(name: string, filename: string | undefined, mimeType: string | undefined): Headers {
  const h = new Headers();
  let disposition = `form-data; ${dispositionParam('name', name)}`;
  if (filename !== undefined) disposition += `; ${dispositionParam('filename', filename)}`;
  h.set('content-disposition', disposition);
  // busboy gives `type/subtype` built from token characters only.
  if (mimeType) h.set('content-type', mimeType);
  return h;
}

const PLAIN_PARAM = /^[\x20-\x7e]*$/;

function dispositionParam(key: string, value: string): string {
  if (PLAIN_PARAM.test(value)) return `${key}="${value.replace(/["\\]/g, '\\$&')}"`;
  return `${key}*=UTF-8''${encodeURIComponent(value)}`;
}
