import type { CachedAnswer, ResponseCacheStore } from '@tiffin/core/internal';
import { Redis } from 'ioredis';

/** What a `RedisResponseCache` is told. */
export interface RedisResponseCacheOptions {
  /** Prefix of its keys (default `tiffin:cache:`): services on one Redis keep apart by their keys' digests. */
  prefix?: string;
  /** Most bytes of one entry read back (default 16 MiB): a larger value is treated as a miss, not allocated. */
  maxEntryBytes?: number;
}

/**
 * The response cache on Redis (docs/cache.md), shared by every replica: one string per answer, `PX` its time
 * to live, evicted by Redis's own policy (give the Redis `maxmemory` and `allkeys-lru`). An entry is the answer's
 * status and headers as JSON behind a 4-byte length, then its body. Commands fail fast (no offline queue, one
 * retry): a Redis that is down costs misses, never a failed call.
 */
export class RedisResponseCache implements ResponseCacheStore {
  private readonly prefix: string;
  private readonly maxEntryBytes: number;

  private constructor(
    private readonly redis: Redis,
    options: RedisResponseCacheOptions,
  ) {
    this.prefix = options.prefix ?? 'tiffin:cache:';
    this.maxEntryBytes = options.maxEntryBytes ?? 16 * 1024 * 1024;
  }

  /** Connect to the Redis at `url` (`redis://host:port/db`, `rediss://` for TLS). */
  static async open(url: string, options: RedisResponseCacheOptions = {}): Promise<RedisResponseCache> {
    const redis = new Redis(url, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      lazyConnect: true,
      commandTimeout: 2000,
    });
    redis.on('error', () => {});
    await redis.connect();
    return new RedisResponseCache(redis, options);
  }

  async get(key: string): Promise<CachedAnswer | undefined> {
    const full = this.prefix + key;
    // The length first: a value over the bound is never read into memory.
    const length = await this.redis.strlen(full);
    if (length === 0 || length > this.maxEntryBytes) return undefined;
    const value = await this.redis.getBuffer(full);
    return value ? decodeEntry(value) : undefined;
  }

  async set(key: string, answer: CachedAnswer, ttlMs: number): Promise<void> {
    const entry = encodeEntry(answer);
    if (entry.byteLength > this.maxEntryBytes) return;
    if (ttlMs > 0) await this.redis.set(this.prefix + key, entry, 'PX', Math.ceil(ttlMs));
    else await this.redis.set(this.prefix + key, entry);
  }

  async close(): Promise<void> {
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}

function encodeEntry(answer: CachedAnswer): Buffer {
  const head = Buffer.from(JSON.stringify({ status: answer.status, headers: answer.headers }), 'utf8');
  const size = Buffer.alloc(4);
  size.writeUInt32BE(head.byteLength);
  return Buffer.concat([size, head, answer.body]);
}

/** An entry read back; one not of this form (another program's key) is a miss. */
function decodeEntry(value: Buffer): CachedAnswer | undefined {
  if (value.byteLength < 4) return undefined;
  const headLength = value.readUInt32BE(0);
  if (headLength > value.byteLength - 4) return undefined;
  try {
    const head = JSON.parse(value.subarray(4, 4 + headLength).toString('utf8')) as Partial<CachedAnswer>;
    if (typeof head.status !== 'number' || !Array.isArray(head.headers)) return undefined;
    const headers = head.headers.filter(
      (h): h is [string, string] => Array.isArray(h) && typeof h[0] === 'string' && typeof h[1] === 'string',
    );
    return { status: head.status, headers, body: new Uint8Array(value.subarray(4 + headLength)) };
  } catch {
    return undefined;
  }
}
