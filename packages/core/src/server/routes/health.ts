import { ServiceUnavailable } from '../../errors/index.js';
import type { Exchange } from '../exchange.js';

/** `/livez` and `/healthz`: the process answers (spec 10.1: 200 text/plain, body `\n`). */
export function liveHandler(ctx: Exchange): void {
  ctx.status = 200;
  ctx.set('content-type', 'text/plain; charset=utf-8');
  ctx.body = '\n';
}

/** `/readyz`: 200 once startup hooks ran and until shutdown begins, else 503. */
export function readyHandler(isReady: () => boolean) {
  return (ctx: Exchange): void => {
    if (!isReady()) throw new ServiceUnavailable('The service is not ready (starting or shutting down)');
    liveHandler(ctx);
  };
}
