import { randomBytes } from 'node:crypto';

/** One stored result: its bytes, media type, and when it stops being served. */
interface StoredResult {
  bytes: Buffer;
  mediaType: string;
  expires: number;
}

export interface ResultStoreOptions {
  /** Seconds a result is served after it was made. */
  ttlSeconds: number;
  /** Results kept at once (the oldest go first). */
  maxCount: number;
  /** Bytes kept at once (the oldest go first). */
  maxBytes: number;
}

/**
 * Images answered as `response_format: "url"`: kept in memory under an unguessable id for a bounded time, and
 * bounded in count and bytes (the oldest dropped first), so clients cannot fill the server's memory.
 */
export class ResultStore {
  private readonly results = new Map<string, StoredResult>();
  private bytes = 0;

  constructor(
    private readonly options: ResultStoreOptions,
    private readonly now: () => number = Date.now,
  ) {}

  /** Stores `bytes` and returns its id. */
  put(bytes: Buffer, mediaType: string): string {
    this.sweep();
    const id = randomBytes(18).toString('base64url');
    this.results.set(id, { bytes, mediaType, expires: this.now() + this.options.ttlSeconds * 1000 });
    this.bytes += bytes.length;
    // Map order is insertion order: the first entries are the oldest.
    for (const [oldId, old] of this.results) {
      if (this.results.size <= this.options.maxCount && this.bytes <= this.options.maxBytes) break;
      if (oldId === id) break;
      this.drop(oldId, old);
    }
    return id;
  }

  /** The result of `id` while it is served, else undefined. */
  get(id: string): { bytes: Buffer; mediaType: string } | undefined {
    this.sweep();
    return this.results.get(id);
  }

  /** Seconds a result stays served. */
  get ttlSeconds(): number {
    return this.options.ttlSeconds;
  }

  private sweep(): void {
    const now = this.now();
    for (const [id, r] of this.results) if (r.expires <= now) this.drop(id, r);
  }

  private drop(id: string, r: StoredResult): void {
    this.results.delete(id);
    this.bytes -= r.bytes.length;
  }
}
