/**
 * An answer as the response cache keeps it: what `POST /<api>` answered, with the handler's status, headers and
 * cookies already applied, its body whole (a streamed answer is never kept).
 */
export interface CachedAnswer {
  status: number;
  headers: Array<[string, string]>;
  body: Uint8Array;
}

/**
 * Where cached answers live: this process's memory by default (`MemoryResponseCache`), or a store every
 * replica shares (`RedisResponseCache` of `@tiffin/tasks-redis`, `tiffin serve --cache redis://…`). Keys are
 * fixed-size digests (`cacheKey`); a store may drop any entry at any time (an answer computed again is the
 * same answer), so a failing store only costs misses.
 */
export interface ResponseCacheStore {
  /** The answer kept under `key` and not expired, or undefined. */
  get(key: string): CachedAnswer | undefined | Promise<CachedAnswer | undefined>;
  /** Keep `answer` under `key` for `ttlMs` (0: until evicted). */
  set(key: string, answer: CachedAnswer, ttlMs: number): void | Promise<void>;
  /** Let go of connections. */
  close?(): Promise<void>;
}

/** Bytes an answer costs a store: its body, its headers and a fixed overhead per entry. */
export function answerBytes(answer: CachedAnswer): number {
  let bytes = 64 + answer.body.byteLength;
  for (const [name, value] of answer.headers) bytes += name.length + value.length + 16;
  return bytes;
}
