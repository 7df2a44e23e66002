import type { InferenceApi } from '../service/inference-api.js';
import type { ResponseCacheDeps } from './api-cache.js';
import { cacheKey, versionOf } from './cache-key.js';
import { answerBytes, type CachedAnswer, type ResponseCacheStore } from './response-cache.js';

/** An answer and where it came from: `hit`, `miss` (computed), or undefined when the call is not cached. */
export interface ProtocolAnswer {
  answer: CachedAnswer;
  cache: 'hit' | 'miss' | undefined;
}

/**
 * The response cache of an API over another protocol than its own route (docs/cache.md, other protocols): the
 * Open Inference Protocol's `infer`. The key is the API's (service, version, API) with the protocol's name and its
 * whole request (tensors, requested outputs, parameters): the answer, encoded as that request asked (JSON or
 * binary tensors), is kept as sent. Identical requests that miss at once compute once. An API whose `cache` has a
 * `when` is not cached here (it judges the decoded input, which exists only once the call runs).
 */
export class ProtocolAnswerCache {
  private readonly flights = new Map<string, Promise<CachedAnswer | undefined>>();

  constructor(
    private readonly deps: ResponseCacheDeps,
    /** Names the protocol in the key, so its answers are never another protocol's. */
    private readonly protocol: string,
  ) {}

  /**
   * `compute`'s answer, or the kept one for the same `request` of `api`. `fresh` (the client's `no-cache`)
   * skips the lookup; the fresh answer replaces the kept one.
   */
  async answer(
    api: InferenceApi,
    request: unknown,
    fresh: boolean,
    compute: () => Promise<CachedAnswer>,
  ): Promise<ProtocolAnswer> {
    const settings = api.cache;
    const { deps } = this;
    const key =
      settings && !settings.when && !api.batching
        ? cacheKey(deps.service, versionOf(deps.version, settings.version), api.name, [
            this.protocol,
            request,
          ])
        : undefined;
    if (!settings || key === undefined) return { answer: await compute(), cache: undefined };
    if (!fresh) {
      let kept = (await this.flights.get(key)) ?? (await fromStore(deps.store, key));
      // A call that missed while this one read the store computes now: wait for it (no await from this check
      // to the flight's start below, so two misses cannot both lead).
      const waiting = kept ? undefined : this.flights.get(key);
      if (waiting) kept = await waiting;
      if (kept) {
        deps.counted(api.name, true);
        return { answer: kept, cache: 'hit' };
      }
    }
    let settle!: (answer: CachedAnswer | undefined) => void;
    const flight = new Promise<CachedAnswer | undefined>((resolve) => {
      settle = resolve;
    });
    this.flights.set(key, flight);
    deps.counted(api.name, false);
    try {
      const answer = await compute();
      const keep =
        answer.status >= 200 && answer.status <= 299 && answerBytes(answer) <= settings.maxBytes
          ? answer
          : undefined;
      settle(keep);
      if (keep) void Promise.resolve(deps.store.set(key, keep, settings.ttlMs)).catch(() => {});
      return { answer, cache: 'miss' };
    } catch (err) {
      settle(undefined);
      throw err;
    } finally {
      if (this.flights.get(key) === flight) this.flights.delete(key);
    }
  }
}

/** A store's answer; a store that fails is a miss (the cache must never fail a call). */
async function fromStore(store: ResponseCacheStore, key: string): Promise<CachedAnswer | undefined> {
  try {
    return await store.get(key);
  } catch {
    return undefined;
  }
}
