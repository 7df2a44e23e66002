/**
 * What a request hook sees of one HTTP request and the answer being built: the server's per-request call
 * object itself (no copy is made for the hooks).
 */
export interface HookCall {
  readonly method: string;
  /** The path without its query string. */
  readonly path: string;
  /** The id sent back in `x-request-id` and written in the access log. */
  readonly requestId: string;
  /** The answer's status so far (404 until a route answered). */
  readonly status: number;
  /** A request header ('' when absent; repeated values joined with ', '). */
  get(field: string): string;
  /** A response header set so far ('' when absent). */
  responseHeader(field: string): string;
  /** Set a response header (replacing any earlier value). */
  set(field: string, value: string): void;
}

/** `onRequest` and `onResponse` hooks: may read the request and set response headers; may be async. */
export type RequestHook = (call: HookCall) => void | Promise<void>;

/** `onError` hooks: told of a request's error before its error body is written; may be async. */
export type ErrorHook = (call: HookCall, error: unknown) => void | Promise<void>;

/** A service's request hooks, each list in the order added. */
export interface RequestHooks {
  readonly onRequest: readonly RequestHook[];
  readonly onResponse: readonly RequestHook[];
  readonly onError: readonly ErrorHook[];
}
