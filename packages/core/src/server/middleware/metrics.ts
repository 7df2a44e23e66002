import type Koa from 'koa';
import type { ServerMetrics } from '../metrics.js';
import type { RequestState } from '../state.js';

const HEALTH_PATHS = new Set(['/livez', '/healthz', '/readyz']);

/** Counts and times every request except scrapes of /metrics itself. */
export function metricsMiddleware(metrics: ServerMetrics): Koa.Middleware<RequestState> {
  return async (ctx, next) => {
    if (ctx.path === '/metrics') return next();
    const done = metrics.start(ctx.state.endpoint, HEALTH_PATHS.has(ctx.path));
    try {
      await next();
    } finally {
      done(ctx.status);
    }
  };
}
