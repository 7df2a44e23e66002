import type Koa from 'koa';
import { ServiceUnavailable } from '../../errors/index.js';
import type { RequestState } from '../state.js';

/** `/livez` and `/healthz`: the process answers (spec 10.1: 200 text/plain, body `\n`). */
export function liveHandler(ctx: Koa.ParameterizedContext<RequestState>): void {
  ctx.status = 200;
  ctx.type = 'text/plain; charset=utf-8';
  ctx.body = '\n';
}

/** `/readyz`: 200 once startup hooks ran and until shutdown begins, else 503. */
export function readyHandler(isReady: () => boolean) {
  return (ctx: Koa.ParameterizedContext<RequestState>): void => {
    if (!isReady()) throw new ServiceUnavailable('The service is not ready (starting or shutting down)');
    liveHandler(ctx);
  };
}
