import type { IncomingMessage } from 'node:http';
import getRawBody, { type RawBodyError } from 'raw-body';
import { BadInput, PayloadTooLarge } from '../errors/index.js';
import { BufferedHttpRequest } from '../http/request.js';
import type { LazyAbort } from './lazy-abort.js';

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

/** Read the whole body as bytes, bounded by `limit` (over it → 413). */
export async function readRawBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = req.headers['content-length'];
  try {
    return await getRawBody(req, { length: declared ?? null, limit });
  } catch (err) {
    const e = err as RawBodyError;
    if (e.type === 'entity.too.large') {
      throw new PayloadTooLarge(`Request body exceeds the limit of ${limit} bytes`);
    }
    if (e.type === 'request.aborted') throw new BadInput('The client aborted the request body');
    if (e.type === 'request.size.invalid') {
      throw new BadInput(`Request body length does not match Content-Length (${declared})`);
    }
    throw new BadInput(`Could not read the request body: ${e.message}`);
  }
}

/** The transport-neutral request descriptors read, over a Node request; the body is read on demand. */
export function adaptRequest(
  req: IncomingMessage,
  url: string,
  options: { maxBodySize: number; abort: LazyAbort },
): BufferedHttpRequest {
  return new BufferedHttpRequest({
    method: req.method ?? 'POST',
    url,
    headers: () => headersFromNode(req),
    body: () => readRawBody(req, options.maxBodySize),
    // Created only when something asks for it (saves an AbortSignal per request).
    signal: () => options.abort.signal,
    multipartLimits: {
      maxFileSize: options.maxBodySize,
      maxFieldSize: options.maxBodySize,
    },
  });
}
