import type { Context } from '../context/context.js';
import type { HttpRequest } from '../http/request.js';
import type { HttpResponse } from '../http/response.js';
import { applyResponseContext } from '../runtime/response-context.js';
import type { InferenceApi } from '../service/inference-api.js';
import { cacheKey, versionOf } from './cache-key.js';
import type { CachedAnswer, ResponseCacheStore } from './response-cache.js';
import { answerBytes } from './response-cache.js';

/** What the HTTP route gives the cache of one service. */
export interface ResponseCacheDeps {
  store: ResponseCacheStore;
  service: string;
  version: string;
  /** Counts a hit or a miss of `api` (`tiffin_api_server_cache_hits_total` / `…_misses_total`). */
  counted(api: string, hit: boolean): void;
}

interface HttpCodec {
  decode(message: HttpRequest, ctx: Context): unknown;
  encode(output: unknown, ctx: Context): HttpResponse | Promise<HttpResponse>;
}

/** The header that tells a client where its answer came from. */
export const CACHE_HEADER = 'tiffin-cache';

/** What the cached function hands the codec instead of an output: the answer to send as it is. */
class Hit {
  constructor(readonly answer: CachedAnswer) {}
}

/** A call that computes the answer others wait for (single flight). */
interface Flight {
  key: string;
  settle(answer: CachedAnswer | undefined): void;
}

/**
 * The API's function and HTTP codec with the response cache in front (docs/cache.md): the key is the service's
 * version, the API and the decoded input (`cacheKey`); a kept answer is sent without calling the function
 * (`Tiffin-Cache: hit`); on a miss the function runs and its answer, with the handler's settings applied, is
 * kept when it is whole, 2xx, sets no cookie and is within `maxBytes` (`Tiffin-Cache: miss`). Identical calls
 * that miss at once wait for the first (one computation). `Cache-Control: no-cache` skips the lookup (the fresh
 * answer is kept). An API without `cache`, or a batchable one, is returned as it is.
 */
export function withResponseCache(
  api: InferenceApi,
  codec: HttpCodec,
  deps: ResponseCacheDeps | undefined,
): { api: InferenceApi; codec: HttpCodec } {
  const settings = api.cache;
  if (!settings || !deps || api.batching) return { api, codec };
  const { store } = deps;
  const flights = new Map<string, Promise<CachedAnswer | undefined>>();
  const leading = new WeakMap<object, Flight>();
  const fn = api.fn as (input: unknown, ctx: Context) => unknown;

  const lead = (key: string, input: unknown, ctx: Context): unknown => {
    let settle!: (answer: CachedAnswer | undefined) => void;
    const done = new Promise<CachedAnswer | undefined>((resolve) => {
      settle = (answer) => {
        if (flights.get(key) === done) flights.delete(key);
        resolve(answer);
      };
    });
    flights.set(key, done);
    leading.set(ctx, { key, settle });
    deps.counted(api.name, false);
    try {
      const output = fn(input, ctx);
      if (output instanceof Promise) output.catch(() => settle(undefined));
      return output;
    } catch (err) {
      settle(undefined);
      throw err;
    }
  };

  const cachedFn = (input: unknown, ctx: Context): unknown => {
    if (settings.when && !settings.when(input)) return fn(input, ctx);
    const key = cacheKey(
      deps.service,
      versionOf(deps.version, settings.version),
      api.name,
      varied(input, ctx.request, settings.vary),
    );
    if (key === undefined) return fn(input, ctx);
    if (noCache(ctx.request)) return lead(key, input, ctx);
    const waiting = flights.get(key);
    if (waiting) return waiting.then((answer) => (answer ? hit(answer) : lead(key, input, ctx)));
    const kept = fromStore(store, key);
    if (kept instanceof Promise)
      return kept.then((answer) => (answer ? hit(answer) : (flights.get(key) ?? lead(key, input, ctx))));
    return kept ? hit(kept) : lead(key, input, ctx);
  };
  const hit = (answer: CachedAnswer): Hit => {
    deps.counted(api.name, true);
    return new Hit(answer);
  };

  const keep = (ctx: Context, response: HttpResponse): HttpResponse => {
    const flight = leading.get(ctx);
    if (!flight) return response;
    leading.delete(ctx);
    const answer = storable(response, ctx, settings.maxBytes);
    flight.settle(answer);
    if (answer) void Promise.resolve(store.set(flight.key, answer, settings.ttlMs)).catch(() => {});
    response.headers.push([CACHE_HEADER, 'miss']);
    return response;
  };
  const cachedCodec: HttpCodec = {
    decode: codec.decode,
    encode(output, ctx) {
      if (output instanceof Hit)
        return { ...output.answer, headers: [...output.answer.headers, [CACHE_HEADER, 'hit']] };
      let response: HttpResponse | Promise<HttpResponse>;
      try {
        response = codec.encode(output, ctx);
      } catch (err) {
        leading.get(ctx)?.settle(undefined);
        throw err;
      }
      if (!(response instanceof Promise)) return keep(ctx, response);
      return response.then(
        (r) => keep(ctx, r),
        (err: unknown) => {
          leading.get(ctx)?.settle(undefined);
          throw err;
        },
      );
    },
  };
  const wrapped = Object.create(api, { fn: { value: cachedFn, enumerable: true } }) as InferenceApi;
  return { api: wrapped, codec: cachedCodec };
}

/** The input with the values of the request headers the answer varies on (`cache.vary`), as the key sees it. */
function varied(input: unknown, request: HttpRequest, vary: readonly string[]): unknown {
  return vary.length === 0 ? input : [input, vary.map((name) => request.headers.get(name))];
}

/** A store's answer; a store that fails is a miss (the cache must never fail a call). */
function fromStore(
  store: ResponseCacheStore,
  key: string,
): CachedAnswer | undefined | Promise<CachedAnswer | undefined> {
  try {
    const kept = store.get(key);
    return kept instanceof Promise ? kept.catch(() => undefined) : kept;
  } catch {
    return undefined;
  }
}

/** Whether the client asked for a fresh answer (`Cache-Control: no-cache`, or `Pragma: no-cache`). */
export function noCache(request: HttpRequest): boolean {
  const control = request.headers.get('cache-control');
  if (control && /(^|[\s,])no-(cache|store)($|[\s,=])/i.test(control)) return true;
  return request.headers.get('pragma')?.toLowerCase() === 'no-cache';
}

/**
 * The answer as kept: whole bytes, 2xx, no cookie, within `maxBytes`, with the handler's status and headers
 * applied (the exchange applies them to the live answer; a kept one must carry them itself), in arrays of its own.
 */
function storable(response: HttpResponse, ctx: Context, maxBytes: number): CachedAnswer | undefined {
  if (!(response.body instanceof Uint8Array)) return undefined;
  const applied = applyResponseContext(response, ctx);
  if (applied.status < 200 || applied.status > 299) return undefined;
  if (applied.headers.some(([name]) => name === 'set-cookie')) return undefined;
  const answer = { status: applied.status, headers: [...applied.headers], body: response.body };
  return answerBytes(answer) <= maxBytes ? answer : undefined;
}
