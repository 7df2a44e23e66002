import { type ResponseCacheDeps, withResponseCache } from '../../cache/api-cache.js';
import type { HttpResponse } from '../../http/response.js';
import { applyCallOptions, httpCallOptions } from '../../runtime/admission/call-options.js';
import { descriptorHttpCodec } from '../../runtime/http-codec.js';
import { isThenable, type Runtime } from '../../runtime/runtime.js';
import type { InferenceApi } from '../../service/service.js';
import { EventStreams } from '../event-streams.js';
import type { Exchange } from '../exchange.js';

export interface ApiRouteDeps {
  runtime: Runtime;
  /** The gate and bounds of event-stream answers. */
  eventStreams: EventStreams;
  /** The service's response cache (APIs with `cache`), or undefined. */
  cache?: ResponseCacheDeps | undefined;
}

/**
 * The HTTP adapter of an API (docs/spec/io-descriptors.md §10.3): the request becomes the runtime's call with the
 * descriptors' HTTP side as its codec (`fromHttpRequest`, `toHttpResponse`); the exchange takes the answer
 * (`Exchange.answer`). The handler answers at once (returns undefined) when every step could: the body came
 * with the headers (the pipeline runs API routes one tick after the request listener, when such a body is in
 * the request's buffer), the descriptors need not wait and the function returned a value. Otherwise it returns the
 * promise of the answer.
 */
export function apiHandler(
  declared: InferenceApi,
  deps: ApiRouteDeps,
): (ctx: Exchange) => Promise<void> | undefined {
  const { runtime, eventStreams } = deps;
  // The handler's status, headers and cookies are applied by the exchange as it takes the answer; an API with
  // `cache` gets the cache in front of its function and codec (docs/cache.md).
  const { api, codec } = withResponseCache(declared, descriptorHttpCodec(declared), deps.cache);

  const queued = api.admission !== undefined;

  /** The exchange takes the descriptor's answer (an event stream trades its API permit for a stream's). */
  const take = (ctx: Exchange, response: HttpResponse, release: () => void): void => {
    if (ctx.timedOut) return;
    // Only a streamed body can be an event stream: bytes (most answers) skip the header lookup.
    const streamed = response.body !== null && !(response.body instanceof Uint8Array);
    ctx.answer(
      streamed && EventStreams.isEventStream(response)
        ? eventStreams.adopt(response, ctx, release)
        : response,
    );
  };

  /** The call with its permit: invoke, and take the answer. */
  const run = (ctx: Exchange, release: () => void): Promise<void> | undefined => {
    // The exchange is the call (and the API function's context) and the message the descriptors read, with
    // the body in hand: descriptors that need not wait answer at once (no microtask turn per step).
    const answer = runtime.invoke(api, ctx, ctx, codec);
    // Any thenable a descriptor returns is awaited, not only a native promise.
    if (isThenable(answer)) return Promise.resolve(answer).then((response) => take(ctx, response, release));
    take(ctx, answer, release);
    return undefined;
  };

  const handle = (ctx: Exchange): Promise<void> | undefined => {
    // The permit is taken once the body is in (descriptors read the same, buffered body): a client that
    // declares a body and stalls holds a socket until the body timeout, never one of the API permits. A body
    // that is not whole in the request's buffer is read (streamed, within the limit and stall timeout).
    if (ctx.bufferedBody === undefined && !ctx.takeBody()) {
      return ctx.body().then((body) => {
        ctx.bufferedBody = body;
        return handle(ctx);
      });
    }
    const release = runtime.admitCall(ctx);
    // A call that waits in its API's queue: the request's deadline, armed by the pipeline, covers the wait.
    if (isThenable(release)) return release.then((permit) => run(ctx, permit));
    return run(ctx, release);
  };
  return (ctx: Exchange): Promise<void> | undefined => {
    // The client's deadline and urgency, read before the pipeline arms the request's deadline (a call that
    // names no deadline to an API without a queue of its own, most calls, costs one lookup).
    if (queued || ctx.req.headers['tiffin-timeout'] !== undefined)
      applyCallOptions(ctx, httpCallOptions(ctx.req));
    return handle(ctx);
  };
}
