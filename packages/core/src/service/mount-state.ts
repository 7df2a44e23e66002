/** What mounted middleware finds in `ctx.state`. */
export interface MountState {
  /** The request's id, as in the access log and the `x-request-id` header. */
  requestId: string;
  /**
   * The request's abort signal, the one an API function gets as `ctx.signal`: it fires when the request's
   * deadline passes (the 504 went out) or its client goes away. Work a route starts (a model run, a fetch, a
   * queue wait) should stop on it; its late answer is dropped anyway. Made on first read.
   */
  readonly signal: AbortSignal;
  /**
   * The request body, read whole once (a second call gets the same bytes) as the server reads an API's:
   * at most `maxBytes` (default and cap: its group's `maxBodySize`, else the server's), a larger declared `content-length`
   * refused before a byte is read and a longer body as soon as it passes, with the 413 `PAYLOAD_TOO_LARGE`;
   * a body that stalls for `bodyTimeout` gets the 408, and its bytes count against the server's body budget
   * (503 `BODY_BUDGET_FULL`). For a route without a body parser of its own.
   */
  body(maxBytes?: number): Promise<Buffer>;
  /**
   * Wait for a slot of API `api`'s own queue (its `concurrency` and `queue`; docs/server.md, queues), held until
   * the request ends: for a route that does that API's work, so its calls and the route's share one bound and one
   * order (the request's RFC 9218 `Priority`, then arrival; its client's share). Resolves at once for an API
   * without a queue of its own; rejects with the queue's 503 `API_QUEUE_FULL` or 429 `API_QUEUE_CLIENT_FULL`
   * (with `Retry-After`), or when the request ends while it waits.
   */
  queue(api: string): Promise<void>;
}
