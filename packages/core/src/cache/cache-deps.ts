import type { Service } from '../service/service.js';
import type { ResponseCacheDeps } from './api-cache.js';
import { MemoryResponseCache } from './memory-response-cache.js';
import type { ResponseCacheStore } from './response-cache.js';

/** The part of the server's metrics the cache counts with (`ServerMetrics.counter`). */
interface CounterSource {
  counter(name: string, help: string, label: string): (value: string) => void;
}

/**
 * The response cache of a service's HTTP APIs: the given store or one in memory, its hits and misses counted by
 * API; undefined when no API has `cache` (nothing made, nothing counted).
 */
export function responseCacheDeps(
  service: Service,
  store: ResponseCacheStore | undefined,
  metrics: CounterSource,
): ResponseCacheDeps | undefined {
  if (![...service.apis.values()].some((api) => api.cache)) return undefined;
  const hits = metrics.counter(
    'cache_hits_total',
    'Answers sent from the response cache, by API',
    'api_name',
  );
  const misses = metrics.counter(
    'cache_misses_total',
    'Calls to cached APIs that ran the function (not kept, expired, or asked fresh), by API',
    'api_name',
  );
  return {
    store: store ?? new MemoryResponseCache(),
    service: service.name,
    version: service.version ?? '0.0.0',
    counted: (api, hit) => (hit ? hits : misses)(api),
  };
}
