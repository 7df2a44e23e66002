import type Koa from 'koa';
import { ServiceUnavailable } from '../../errors/index.js';
import type { RequestState } from '../state.js';

/** Paths that must answer even when the server is saturated (D5). */
export const UNLIMITED_PATHS: ReadonlySet<string> = new Set(['/livez', '/healthz', '/readyz', '/metrics']);

/**
 * At most `max` requests at once (health paths excluded); one more is refused at once with 503 and
 * `Retry-After` (D5), never queued. A permit is held until the response is fully sent.
 */
export function concurrencyLimit(max: number, retryAfterSeconds: number): Koa.Middleware<RequestState> {
  let inFlight = 0;
  return async (ctx, next) => {
    if (UNLIMITED_PATHS.has(ctx.path)) return next();
    if (inFlight >= max) {
      ctx.set('retry-after', String(retryAfterSeconds));
      throw new ServiceUnavailable(`Too many requests: the server is handling its limit of ${max}`);
    }
    inFlight++;
    let released = false;
    const release = () => {
      if (!released) {
        released = true;
        inFlight--;
      }
    };
    ctx.state.onClose.push(release);
    try {
      await next();
    } catch (err) {
      release();
      throw err;
    }
  };
}
