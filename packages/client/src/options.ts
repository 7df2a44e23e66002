/** Options of `createClient`. */
export interface ClientOptions {
  /** Where the service is served, e.g. `http://127.0.0.1:3000` (a path prefix is kept). */
  baseUrl: string;
  /** Sent as `Authorization: Bearer <token>` on every request. */
  token?: string;
  /** Per call, including retries and reading the response (streams: until the headers). Default none. */
  timeoutMs?: number;
  /** How many times a 503 answer is retried, waiting as its `Retry-After` says (default 2). */
  retries?: number;
  /** Longest wait between retries in milliseconds, whatever `Retry-After` asks (default 30000). */
  maxRetryDelayMs?: number;
  /** Extra headers sent with every request. */
  headers?: Record<string, string>;
  /** The fetch to use (default the global one). */
  fetch?: typeof fetch;
}

/** Options of one call. */
export interface CallOptions {
  /** Aborts the call. */
  signal?: AbortSignal;
  /** Overrides the client's `timeoutMs` for this call. */
  timeoutMs?: number;
  /** Extra headers for this call. */
  headers?: Record<string, string>;
}
