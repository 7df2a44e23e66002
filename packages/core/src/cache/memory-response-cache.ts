import { InvalidArgument } from '../errors/index.js';
import { answerBytes, type CachedAnswer, type ResponseCacheStore } from './response-cache.js';

/** Bytes the in-memory cache holds by default: 64 MiB. */
export const DEFAULT_CACHE_CAPACITY_BYTES = 64 * 1024 * 1024;

interface Entry {
  answer: CachedAnswer;
  bytes: number;
  /** performance.now() past which the entry is gone; Infinity: never. */
  expiresAt: number;
}

/**
 * Cached answers in this process, bounded by bytes: the least recently used go first when a new one would
 * pass the capacity (a Map keeps insertion order; a hit moves its entry to the end). Expired entries are dropped
 * when met.
 */
export class MemoryResponseCache implements ResponseCacheStore {
  private readonly entries = new Map<string, Entry>();
  private held = 0;

  constructor(readonly capacityBytes: number = DEFAULT_CACHE_CAPACITY_BYTES) {
    if (!Number.isInteger(capacityBytes) || capacityBytes < 1)
      throw new InvalidArgument(`cache capacity must be a whole number of bytes >= 1, got ${capacityBytes}`);
  }

  /** Bytes held now. */
  get bytes(): number {
    return this.held;
  }

  get size(): number {
    return this.entries.size;
  }

  get(key: string): CachedAnswer | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    this.entries.delete(key);
    if (entry.expiresAt <= performance.now()) {
      this.held -= entry.bytes;
      return undefined;
    }
    this.entries.set(key, entry);
    return entry.answer;
  }

  set(key: string, answer: CachedAnswer, ttlMs: number): void {
    const bytes = answerBytes(answer) + key.length;
    const old = this.entries.get(key);
    if (old) {
      this.entries.delete(key);
      this.held -= old.bytes;
    }
    if (bytes > this.capacityBytes) return;
    for (const [oldest, entry] of this.entries) {
      if (this.held + bytes <= this.capacityBytes) break;
      this.entries.delete(oldest);
      this.held -= entry.bytes;
    }
    this.entries.set(key, { answer, bytes, expiresAt: ttlMs > 0 ? performance.now() + ttlMs : Infinity });
    this.held += bytes;
  }

  async close(): Promise<void> {
    this.entries.clear();
    this.held = 0;
  }
}
