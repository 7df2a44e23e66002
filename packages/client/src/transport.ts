import { errorFromResponse, TiffinClientError } from './errors.js';
import type { CallOptions, ClientOptions } from './options.js';

/** A request body that can be sent more than once (retries resend it). */
export type ReplayableBody = string | Blob | FormData | null;

export interface Exchange {
  method: 'GET' | 'POST';
  path: string;
  body?: ReplayableBody;
  headers?: Record<string, string>;
  /** Names the call in error messages. */
  what: string;
}

/** A response that succeeded, and `done()` to call once its body was read (clears the timeout). */
export interface Answer {
  response: Response;
  done(): void;
}

const DEFAULT_RETRIES = 2;
const DEFAULT_MAX_DELAY_MS = 30_000;

/** Milliseconds a `Retry-After` value asks for (seconds or an HTTP date), or null when absent/invalid. */
export function retryAfterMs(value: string | null, now = Date.now()): number | null {
  if (value === null || value.trim() === '') return null;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** Joins the base URL and a path, keeping a base path prefix (`http://h/prefix` + `/x` → `http://h/prefix/x`). */
export function joinUrl(baseUrl: string, path: string): string {
  return baseUrl.replace(/\/+$/, '') + (path.startsWith('/') ? path : `/${path}`);
}

/**
 * Sends one exchange with the client's token and headers; a 503 is retried up to `retries` times after
 * the `Retry-After` delay (or a short backoff), within the call's timeout. Non-2xx answers become
 * `TiffinClientError`s carrying the server's `type`/`code`/message.
 */
export async function send(
  options: ClientOptions,
  exchange: Exchange,
  call: CallOptions = {},
): Promise<Answer> {
  const doFetch = options.fetch ?? globalThis.fetch;
  const timeoutMs = call.timeoutMs ?? options.timeoutMs;
  const timed = timeoutMs !== undefined && timeoutMs > 0;
  // Only calls with a timeout or a caller's signal pay for an AbortController.
  const controller = timed || call.signal ? new AbortController() : undefined;
  let timedOut = false;
  const timer =
    timed && controller
      ? setTimeout(() => {
          timedOut = true;
          controller.abort(
            new TiffinClientError(`${exchange.what}: timed out after ${timeoutMs} ms`, 'timeout'),
          );
        }, timeoutMs)
      : undefined;
  const onCallerAbort = () => controller?.abort(call.signal?.reason);
  if (call.signal?.aborted) onCallerAbort();
  call.signal?.addEventListener('abort', onCallerAbort, { once: true });
  const done = () => {
    if (timer !== undefined) clearTimeout(timer);
    call.signal?.removeEventListener('abort', onCallerAbort);
  };

  const headers: Record<string, string> = { ...options.headers, ...exchange.headers, ...call.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  const url = joinUrl(options.baseUrl, exchange.path);
  const retries = options.retries ?? DEFAULT_RETRIES;
  const maxDelay = options.maxRetryDelayMs ?? DEFAULT_MAX_DELAY_MS;
  try {
    for (let attempt = 0; ; attempt++) {
      let response: Response;
      try {
        response = await doFetch(url, {
          method: exchange.method,
          headers,
          body: exchange.body ?? null,
          signal: controller?.signal ?? null,
        });
      } catch (err) {
        if (timedOut) throw controller?.signal.reason;
        if (call.signal?.aborted) throw err;
        throw new TiffinClientError(
          `${exchange.what}: ${(err as Error).message}`,
          'network',
          0,
          undefined,
          undefined,
          {
            cause: err,
          },
        );
      }
      if (response.status === 503 && attempt < retries) {
        const wait = retryAfterMs(response.headers.get('retry-after')) ?? 100 * 2 ** attempt;
        await response.body?.cancel().catch(() => {});
        try {
          await sleep(Math.min(wait, maxDelay), controller?.signal);
        } catch (err) {
          if (timedOut) throw controller?.signal.reason;
          throw err;
        }
        continue;
      }
      if (!response.ok) throw await errorFromResponse(response, exchange.what);
      return { response, done };
    }
  } catch (err) {
    done();
    throw err;
  }
}
