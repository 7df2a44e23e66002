import type { Exchange } from '../exchange.js';
import type { ServerMetrics } from '../metrics.js';

/**
 * `/metrics`: this server's registry in the Prometheus text format, or in OpenMetrics (with exemplars naming
 * sampled requests' traces) when the scraper asks for it in `Accept` (docs/observability.md).
 */
export function metricsHandler(metrics: ServerMetrics) {
  return async (ctx: Exchange): Promise<void> => {
    const { text, contentType } = await metrics.exposition(
      ctx.get('accept').includes('application/openmetrics-text'),
    );
    ctx.status = 200;
    ctx.set('content-type', contentType);
    ctx.responseBody = text;
  };
}
