import type { IncomingMessage, ServerResponse } from 'node:http';
import Koa from 'koa';
import { registerInferenceProtocol } from '../inference-protocol/routes.js';
import { buildOpenApiDocument } from '../openapi/document.js';
import type { Service } from '../service/service.js';
import { bearerAuth } from './auth.js';
import { DirectExchange, type Exchange } from './exchange.js';
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
  /**
   * The Node request listener `serve()` uses: `POST /<api>` goes straight through the request pipeline over
   * Node's request/response (same behaviour, without Koa's per-request cost), everything else through
   * `app.callback()`. If middleware was added to `app`, every request goes through Koa so that it sees them all.
   * Take it after changing `app`.
   */
  requestListener(): (req: IncomingMessage, res: ServerResponse) => void;
}

/** Build the Koa app serving `service` (routes, middleware, docs), without listening. */
export function createApp(service: Service, options: ServerOptions = {}): TiffinApp {
  const resolved = resolveServerOptions(options, new JsonLineLogger());
  const logger = resolved.logger === false ? silentLogger : resolved.logger;
  const lifecycle = new AppLifecycle(service);
  const metrics = new ServerMetrics(service.name, service.version ?? '0.0.0');
  const routes = new RouteTable();

  const isReady = () => lifecycle.isReady;
  const apiHandlers = new Map<string, (ctx: Exchange) => Promise<void>>();
  for (const api of service.apis.values()) {
    const handler = apiHandler(api, {
      service,
      maxBodySize: resolved.maxBodySize,
      limits: resolved.limits,
      isReady,
    });
    // The methods the input descriptor reads its value from (POST for bodies; GET for query parameters).
    // The direct path (below) serves POST APIs only.
    if (api.input.httpMethods.includes('POST')) apiHandlers.set(api.route, handler);
    routes.add(api.route, Object.fromEntries(api.input.httpMethods.map((m) => [m, handler])), api);
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
  if (resolved.inferenceProtocol) {
    const infer = registerInferenceProtocol(routes, {
      service,
      maxBodySize: resolved.maxBodySize,
      limits: resolved.limits,
      isReady,
    });
    for (const [path, handler] of infer) apiHandlers.set(path, handler);
  }
  routes.add('/livez', { GET: liveHandler });
  routes.add('/healthz', { GET: liveHandler });
  routes.add('/readyz', { GET: readyHandler(isReady) });
  if (resolved.metrics) routes.add('/metrics', { GET: metricsHandler(metrics) });

  const pipeline = requestPipeline({
    routes,
    lifecycle,
    gate: new ConcurrencyGate(resolved.maxConcurrency, resolved.retryAfter),
    timeout: resolved.timeout,
    metrics: resolved.metrics ? metrics : undefined,
    logger,
    cors: resolved.cors.enabled ? corsStage(resolved.cors) : undefined,
    auth: resolved.apiToken
      ? bearerAuth({ token: resolved.apiToken, metricsAuth: resolved.metricsAuth })
      : undefined,
  });
  const app = new Koa<RequestState>();
  app.use((ctx) => pipeline(ctx, () => routes.dispatch(ctx)));
  const responseFailed = (err: Error, requestId: string | undefined) =>
    logger.log('error', 'response failed', { requestId, error: err.message, stack: err.stack });
  // Errors after the response started (a failing stream) reach Koa's own handler: log them, quietly.
  app.silent = true;
  app.on('error', (err: Error, ctx?: Koa.ParameterizedContext<RequestState>) =>
    responseFailed(err, ctx?.state.requestId),
  );

  const serveDirect = (
    req: IncomingMessage,
    res: ServerResponse,
    path: string,
    handler: (ctx: Exchange) => Promise<void>,
  ): void => {
    const exchange = new DirectExchange(req, res, path);
    pipeline(exchange, () => handler(exchange)).then(
      () => exchange.respond((err) => responseFailed(err, exchange.state.requestId)),
      // The pipeline answers every error itself; getting here is a bug in it.
      (err: unknown) => {
        responseFailed(err instanceof Error ? err : new Error(String(err)), exchange.state.requestId);
        if (!res.headersSent) res.statusCode = 500;
        res.end();
      },
    );
  };

  const requestListener = (): ((req: IncomingMessage, res: ServerResponse) => void) => {
    const viaKoa = app.callback();
    if (app.middleware.length !== 1) return viaKoa;
    return (req, res) => {
      if (req.method === 'POST') {
        const url = req.url ?? '/';
        const q = url.indexOf('?');
        const path = q >= 0 ? url.slice(0, q) : url;
        const handler = apiHandlers.get(path);
        if (handler) return serveDirect(req, res, path, handler);
      }
      viaKoa(req, res);
    };
  };

  return { app, lifecycle, options: resolved, logger, metrics, requestListener };
}
