import { ServiceUnavailable } from '../../errors/index.js';
import type { Exchange } from '../exchange.js';

/** `/livez` and `/healthz`: the process answers (docs/spec/io-descriptors.md §10.1: 200 text/plain, body `\n`). */
export function liveHandler(ctx: Exchange): void {
  ctx.status = 200;
  ctx.set('content-type', 'text/plain; charset=utf-8');
  ctx.responseBody = '\n';
}

/**
 * `/readyz`: 200 once startup hooks ran, while the service's readiness checks pass and until shutdown begins;
 * else 503 naming why.
 */
export function readyHandler(notReadyReason: () => string | null) {
  return (ctx: Exchange): void => {
    const reason = notReadyReason();
    if (reason !== null) throw new ServiceUnavailable(reason);
    liveHandler(ctx);
  };
}
