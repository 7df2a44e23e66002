import { withDefaultCharset } from './media-type.js';

/** A cookie set through `ctx.response.setCookie` (docs/spec/io-descriptors.md §1.3 rule 5). */
export interface Cookie {
  key: string;
  value: string;
  maxAge?: number;
  expires?: Date | string;
  path?: string;
  domain?: string;
  secure?: boolean;
  httponly?: boolean;
  samesite?: 'lax' | 'strict' | 'none';
}

/** Body of a response: bytes, or a stream of chunks (sent chunked, no content-length). */
export type ResponseBody = Uint8Array | AsyncIterable<Uint8Array> | null;

/**
 * What a descriptor's `toHttpResponse` returns: transport-neutral, with headers in wire order and names
 * lower-cased. The server copies it onto the socket as is.
 */
export interface HttpResponse {
  status: number;
  headers: Array<[string, string]>;
  body: ResponseBody;
}

export interface BuildResponseInit {
  body: string | Uint8Array | AsyncIterable<Uint8Array | string> | null;
  status?: number;
  /** Explicit headers, first on the wire, in this order. */
  headers?: Iterable<[string, string]>;
  /** Media type; added as content-type (with the text charset rule) unless headers carry one. */
  mediaType?: string | null;
  cookies?: Iterable<Cookie>;
}

/** Build a response with the header-order, charset and cookie rules of docs/spec/io-descriptors.md §1.3. */
export function buildResponse(init: BuildResponseInit): HttpResponse {
  const headers: Array<[string, string]> = [];
  let sized = false;
  let typed = false;
  if (init.headers) {
    for (const [name, value] of init.headers) {
      const lower = name.toLowerCase();
      if (lower === 'content-length') sized = true;
      else if (lower === 'content-type') typed = true;
      headers.push([lower, value]);
    }
  }
  let body: ResponseBody;
  if (init.body === null) body = new Uint8Array(0);
  else if (typeof init.body === 'string') body = Buffer.from(init.body, 'utf8');
  else if (init.body instanceof Uint8Array) body = init.body;
  else body = encodeChunks(init.body);
  if (!sized && body instanceof Uint8Array) headers.push(['content-length', String(body.byteLength)]);
  if (!typed && init.mediaType) headers.push(['content-type', withDefaultCharset(init.mediaType)]);
  if (init.cookies) for (const cookie of init.cookies) headers.push(['set-cookie', serializeCookie(cookie)]);
  return { status: init.status ?? 200, headers, body };
}

async function* encodeChunks(source: AsyncIterable<Uint8Array | string>): AsyncIterable<Uint8Array> {
  for await (const chunk of source) yield typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
}

export function serializeCookie(c: Cookie): string {
  let out = `${c.key}=${c.value}`;
  if (c.maxAge !== undefined) out += `; Max-Age=${c.maxAge}`;
  if (c.expires !== undefined) {
    out += `; expires=${(c.expires instanceof Date ? c.expires : new Date(c.expires)).toUTCString()}`;
  }
  out += `; Path=${c.path ?? '/'}`;
  if (c.domain) out += `; Domain=${c.domain}`;
  if (c.secure) out += '; Secure';
  if (c.httponly) out += '; HttpOnly';
  out += `; SameSite=${c.samesite ?? 'lax'}`;
  return out;
}

/** Read a response body fully (tests, Multipart composition). */
export async function readResponseBody(res: HttpResponse): Promise<Buffer> {
  if (res.body === null) return Buffer.alloc(0);
  if (res.body instanceof Uint8Array)
    return Buffer.from(res.body.buffer, res.body.byteOffset, res.body.byteLength);
  const chunks: Buffer[] = [];
  for await (const c of res.body) chunks.push(Buffer.from(c));
  return Buffer.concat(chunks);
}

export function getHeader(res: HttpResponse, name: string): string | undefined {
  const lower = name.toLowerCase();
  return res.headers.find(([n]) => n === lower)?.[1];
}
