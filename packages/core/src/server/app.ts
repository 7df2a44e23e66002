import Koa from 'koa';
import { buildOpenApiDocument } from '../openapi/document.js';
import type { Service } from '../service/service.js';
import { AppLifecycle } from './lifecycle.js';
import { JsonLineLogger, type Logger, silentLogger } from './logger.js';
import { ServerMetrics } from './metrics.js';
import { type ResolvedServerOptions, resolveServerOptions, type ServerOptions } from './options.js';
import { ConcurrencyGate } from './pipeline/concurrency-gate.js';
import { corsStage } from './pipeline/cors.js';
import { requestPipeline } from './pipeline/request-pipeline.js';
import { apiHandler } from './routes/api.js';
import { ApiPage } from './routes/api-page.js';
import { liveHandler, readyHandler } from './routes/health.js';
import { metricsHandler } from './routes/metrics.js';
import { RouteTable } from './routes/route-table.js';
import type { RequestState } from './state.js';

export interface TiffinApp {
  /** The Koa application (mount it, or pass `app.callback()` to your own server). */
  app: Koa<RequestState>;
  lifecycle: AppLifecycle;
  options: ResolvedServerOptions;
  logger: Logger;
  metrics: ServerMetrics;
}

/** Build the Koa app serving `service` (routes, middleware, docs), without listening. */
export function createApp(service: Service, options: ServerOptions = {}): TiffinApp {
  const resolved = resolveServerOptions(options, new JsonLineLogger());
  const logger = resolved.logger === false ? silentLogger : resolved.logger;
  const lifecycle = new AppLifecycle(service);
  const metrics = new ServerMetrics(service.name, service.version ?? '0.0.0');
  const routes = new RouteTable();

  const isReady = () => lifecycle.isReady;
  for (const api of service.apis.values()) {
    routes.add(
      api.route,
      { POST: apiHandler(api, { service, maxBodySize: resolved.maxBodySize, isReady }) },
      api,
    );
  }
  let docsJson: string | undefined;
  routes.add('/docs.json', {
    GET: (ctx) => {
      docsJson ??= JSON.stringify(buildOpenApiDocument(service));
      ctx.status = 200;
      ctx.type = 'application/json';
      ctx.body = docsJson;
    },
  });
  if (resolved.apiPage) {
    const page = new ApiPage(service.name);
    routes.add('/', { GET: page.index });
    for (const path of page.assetPaths()) routes.add(path, { GET: page.asset });
  }
  routes.add('/livez', { GET: liveHandler });
  routes.add('/healthz', { GET: liveHandler });
  routes.add('/readyz', { GET: readyHandler(isReady) });
  if (resolved.metrics) routes.add('/metrics', { GET: metricsHandler(metrics) });

  const app = new Koa<RequestState>();
  app.use(
    requestPipeline({
      routes,
      lifecycle,
      gate: new ConcurrencyGate(resolved.maxConcurrency, resolved.retryAfter),
      timeout: resolved.timeout,
      metrics: resolved.metrics ? metrics : undefined,
      logger,
      cors: resolved.cors.enabled ? corsStage(resolved.cors) : undefined,
    }),
  );
  // Errors after the response started (a failing stream) reach Koa's own handler: log them, quietly.
  app.silent = true;
  app.on('error', (err: Error, ctx?: Koa.ParameterizedContext<RequestState>) => {
    logger.log('error', 'response failed', {
      requestId: ctx?.state.requestId,
      error: err.message,
      stack: err.stack,
    });
  });
  return { app, lifecycle, options: resolved, logger, metrics };
}
