import type { Exchange } from '../exchange.js';
import type { ServerMetrics } from '../metrics.js';

/** `/metrics`: the Prometheus text exposition of this server's registry. */
export function metricsHandler(metrics: ServerMetrics) {
  return async (ctx: Exchange): Promise<void> => {
    const text = await metrics.registry.metrics();
    ctx.status = 200;
    ctx.set('content-type', metrics.registry.contentType);
    ctx.responseBody = text;
  };
}
