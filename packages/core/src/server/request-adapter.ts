import type { IncomingMessage } from 'node:http';
import { BufferedHttpRequest } from '../http/request.js';
import type { Limits } from '../limits/limits.js';
import type { BodyReservation } from '../runtime/body-budget.js';
import type { LazyAbort } from '../runtime/lazy-abort.js';
import { readBody } from './read-body.js';

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

/** The transport-neutral request descriptors read, over a Node request; the body is read on demand. */
export function adaptRequest(
  req: IncomingMessage,
  url: string,
  options: {
    maxBodySize: number;
    abort: LazyAbort;
    limits: Readonly<Limits>;
    bodyTimeoutMs: number;
    /** The call's share of the server's body budget. */
    bodyBytes: BodyReservation;
  },
): BufferedHttpRequest {
  return new BufferedHttpRequest({
    method: req.method ?? 'POST',
    url,
    headers: () => headersFromNode(req),
    body: () => readBody(req, options.maxBodySize, options.bodyTimeoutMs, options.bodyBytes),
    // Created only when something asks for it (saves an AbortSignal per request).
    signal: () => options.abort.signal,
    limits: options.limits,
    multipartLimits: {
      maxFileSize: options.maxBodySize,
      maxFieldSize: options.maxBodySize,
    },
  });
}
