import type Koa from 'koa';
import { LazyAbort } from '../lazy-abort.js';
import { type Logger, silentLogger } from '../logger.js';
import { requestIdFor } from '../request-id.js';
import type { RouteTable } from '../routes/route-table.js';
import type { RequestState } from '../state.js';

export interface RequestContextDeps {
  routes: RouteTable;
  logger: Logger;
  /** True once shutdown began: responses ask the client to close the connection. */
  isDraining: () => boolean;
}

/**
 * Outermost middleware: gives the request its id and route, aborts it when the client goes away, stamps
 * `x-request-id` on every response, and writes one access-log line.
 */
export function requestContext(deps: RequestContextDeps): Koa.Middleware<RequestState> {
  return async (ctx, next) => {
    const start = process.hrtime.bigint();
    const requestId = requestIdFor(ctx.get('x-request-id') || undefined);
    const match = deps.routes.match(ctx.path);
    const abort = new LazyAbort();
    const onClose: Array<() => void> = [];
    ctx.state.requestId = requestId;
    ctx.state.endpoint = match?.path ?? 'unmatched';
    ctx.state.api = match?.api;
    ctx.state.abort = abort;
    ctx.state.timedOut = false;
    ctx.state.onClose = onClose;
    // One listener per request; the others register callbacks in `onClose`.
    ctx.res.once('close', () => {
      if (!ctx.res.writableFinished) abort.abort(new Error('client disconnected'));
      for (const fn of onClose) fn();
    });
    try {
      await next();
    } finally {
      ctx.set('x-request-id', requestId);
      if (deps.isDraining()) ctx.set('connection', 'close');
      if (deps.logger !== silentLogger)
        deps.logger.log('info', 'request', {
          requestId,
          method: ctx.method,
          path: ctx.path,
          status: ctx.status,
          requestType: ctx.get('content-type') || undefined,
          requestLength: ctx.get('content-length') || undefined,
          responseType: ctx.response.get('content-type') || undefined,
          ms: Number(process.hrtime.bigint() - start) / 1e6,
        });
    }
  };
}
