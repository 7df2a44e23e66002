import type { IncomingMessage, ServerResponse } from 'node:http';
import Koa from 'koa';
import compose from 'koa-compose';
import type { ResponseCacheDeps } from '../cache/api-cache.js';
import { responseCacheDeps } from '../cache/cache-deps.js';
import { defaultLogger, type Logger, silentLogger } from '../logging/logger.js';
import { buildOpenApiDocument } from '../openapi/document.js';
import { watchQueueDepth } from '../runtime/queue-readiness.js';
import { Runtime } from '../runtime/runtime.js';
import { TaskMetrics } from '../runtime/task-metrics.js';
import { TaskRunner } from '../runtime/task-runner.js';
import { TaskWebhooks } from '../runtime/task-webhook.js';
import type { InferenceApi, Service } from '../service/service.js';
import { resolveTracer } from '../tracing/tracing.js';
import { bearerAuth } from './auth.js';
import { EventStreams } from './event-streams.js';
import { type BodyReading, Exchange } from './exchange.js';
import { AppLifecycle } from './lifecycle.js';
import { ServerMetrics } from './metrics.js';
import { type MountState, mountedHandler } from './mount/mounted-handler.js';
import { type ResolvedServerOptions, resolveServerOptions, type ServerOptions } from './options.js';
import { corsStage } from './pipeline/cors.js';
import { type Dispatch, requestPipeline } from './pipeline/request-pipeline.js';
import { writeError } from './pipeline/write-error.js';
import { requestIdFor } from './request-id.js';
import { apiHandler } from './routes/api.js';
import { ApiPage } from './routes/api-page.js';
import { addExampleFileRoutes } from './routes/example-files.js';
import { liveHandler, readyHandler } from './routes/health.js';
import { registerInferenceProtocol } from './routes/inference-protocol.js';
import { metricsHandler } from './routes/metrics.js';
import { RouteTable } from './routes/route-table.js';
import { taskRoutes } from './routes/tasks.js';
import { SendDeadlines } from './send-deadline.js';

export interface TiffinApp {
  /**
   * A Koa application whose last middleware serves the service, for mounting `app.callback()` in your own
   * server. Routes of your own go on the service (`svc.mount()`); middleware added here
   * (`app.middleware.unshift(mine)`) sees every request first and may set headers.
   */
  app: Koa<KoaState>;
  lifecycle: AppLifecycle;
  options: ResolvedServerOptions;
  logger: Logger;
  metrics: ServerMetrics;
  /** The invocation core: gate, deadline, batching. Pass it to `serveGrpc` so both transports share it. */
  runtime: Runtime;
  /** The service's response cache (APIs with `cache`), or undefined: pass it to `serveGrpc` with `runtime`. */
  cache: ResponseCacheDeps | undefined;
  /** Serve one request (what the Koa app's own middleware and `requestListener()` call). */
  handle(req: IncomingMessage, res: ServerResponse): Promise<void>;
  /**
   * The Node request listener `serve()` uses: `handle` directly (no Koa per-request cost) unless middleware was
   * added to `app`, then `app.callback()` so that it sees every request. Take it after changing `app`.
   */
  requestListener(): (req: IncomingMessage, res: ServerResponse) => void;
}

/** Build the app serving `service` (routes, pipeline, docs), without listening. */
export function createApp(service: Service, options: ServerOptions = {}): TiffinApp {
  const resolved = resolveServerOptions(
    options,
    options.logger === undefined ? defaultLogger() : silentLogger,
  );
  const logger = resolved.logger === false ? silentLogger : resolved.logger;
  const lifecycle = new AppLifecycle(service);
  const tracer = resolveTracer(resolved.tracing);
  const metrics = new ServerMetrics(service.name, service.version ?? '0.0.0');
  for (const counter of service.counters) metrics.serviceCounter(counter);
  const runtime = new Runtime(service, {
    timeout: resolved.timeout,
    maxConcurrency: resolved.maxConcurrency,
    retryAfter: resolved.retryAfter,
    logger,
    isReady: () => lifecycle.isReady,
    registry: metrics.registry,
    limits: resolved.limits,
    maxBufferedBytes: resolved.maxBufferedBytes,
    tracer,
  });
  const routes = new RouteTable();
  const bodyTimeoutMs = resolved.bodyTimeout * 1000;
  const eventStreams = new EventStreams({
    maxStreams: resolved.maxStreams,
    idleMs: resolved.streamIdleTimeout * 1000,
    lifetimeMs: resolved.streamLifetime * 1000,
    retryAfter: resolved.retryAfter,
  });

  const cache = responseCacheDeps(service, resolved.cache, metrics);
  if (resolved.readyMaxQueue !== undefined) watchQueueDepth(service, resolved.readyMaxQueue);
  let taskRunner: TaskRunner | undefined;
  let taskMetrics: TaskMetrics | undefined;
  const serveApi = (api: InferenceApi): void => {
    const handler = apiHandler(api, { runtime, eventStreams, cache });
    // The methods the input descriptor reads its value from (POST for bodies; GET for query parameters).
    routes.add(api.route, Object.fromEntries(api.input.httpMethods.map((m) => [m, handler])), api);
    if (!api.task) return;
    if (!taskRunner) {
      taskMetrics = new TaskMetrics(metrics.registry, service.name, () => service.tasks);
      const runner = new TaskRunner(
        service,
        runtime,
        logger,
        taskMetrics,
        new TaskWebhooks(resolved.webhooks, logger),
      );
      lifecycle.watch(
        () => runner.start(),
        () => runner.stop(),
      );
      taskRunner = runner;
    }
    const operations = taskRoutes(api, {
      runtime,
      runner: taskRunner,
      store: (taskMetrics as TaskMetrics).store,
      eventStreams,
    });
    for (const [operation, methods] of Object.entries(operations))
      routes.add(`${api.route}/${operation}`, methods, api);
  };
  for (const api of service.apis.values()) serveApi(api);
  let docsJson: string | undefined;
  // An API registered while serving (a repository's new model) is routed, and the API page shows it.
  service.watchApis((api) => {
    serveApi(api);
    docsJson = undefined;
  });
  routes.add('/docs.json', {
    GET: (ctx) => {
      docsJson ??= JSON.stringify(buildOpenApiDocument(service));
      ctx.status = 200;
      ctx.set('content-type', 'application/json; charset=utf-8');
      ctx.responseBody = docsJson;
    },
  });
  addExampleFileRoutes(routes, service);
  if (resolved.apiPage) {
    const page = new ApiPage(service.name);
    routes.add('/', { GET: page.index });
    for (const path of page.assetPaths()) routes.add(path, { GET: page.asset });
  }
  if (resolved.inferenceProtocol) {
    registerInferenceProtocol(routes, {
      service,
      runtime,
      limits: resolved.limits,
      isReady: () => lifecycle.notReadyReason() === null,
      cache,
    });
  }
  routes.add('/livez', { GET: liveHandler });
  routes.add('/healthz', { GET: liveHandler });
  routes.add('/readyz', { GET: readyHandler(() => lifecycle.notReadyReason()) });
  if (resolved.metrics) routes.add('/metrics', { GET: metricsHandler(metrics) });

  const authCheck = resolved.apiToken
    ? bearerAuth({ token: resolved.apiToken, metricsAuth: resolved.metricsAuth })
    : undefined;
  // Public mounts answer without the token, route groups under their own auth mode: the mount stage then checks
  // it, after the gate (see mountedHandler).
  const authInMounts = service.mounts.some((m) => m.public || m.group) ? authCheck : undefined;
  const pipeline = requestPipeline({
    routes,
    lifecycle,
    runtime,
    metrics: resolved.metrics ? metrics : undefined,
    logger,
    cors: resolved.cors.enabled ? corsStage(resolved.cors) : undefined,
    auth: authInMounts ? undefined : authCheck,
    body: { limit: resolved.maxBodySize, idleMs: bodyTimeoutMs },
    hooks: service.requestHooks,
    tracer,
    serverTiming: resolved.serverTiming,
  });
  const responseFailed = (err: Error, requestId: string | undefined): void =>
    logger.log('error', 'response failed', { requestId, error: err.message, stack: err.stack });

  // How every route reads a request body (the API, task and v2 routes; descriptors through `HttpRequest`).
  const reading: BodyReading = {
    maxBodySize: resolved.maxBodySize,
    bodyTimeoutMs,
    limits: resolved.limits,
    budget: runtime.bodyBudget,
  };
  // The routed handler: the route table, or the mounts in front of it. Without mounts, exactly as before.
  const koaContexts = new WeakMap<Exchange, Koa.ParameterizedContext<MountState>>();
  const routed: Dispatch =
    service.mounts.length === 0
      ? routes.dispatch.bind(routes)
      : mountedHandler({
          mounts: service.mounts,
          routes,
          reading,
          auth: authInMounts,
          retime: (exchange, seconds) => runtime.retime(exchange, seconds),
          admitTo: (exchange, api) => runtime.admitTo(exchange, api),
          koaContext: (exchange) => {
            const ctx =
              koaContexts.get(exchange) ?? app.createContext<MountState>(exchange.req, exchange.res);
            // Koa's starting status, as its own request handling sets it.
            exchange.res.statusCode = 404;
            return ctx;
          },
        });
  const cutOff = metrics.counter(
    'responses_cut_total',
    'Responses cut off by the send deadline: the client stopped reading (stalled) or a stream passed its lifetime (deadline)',
    'reason',
  );
  const sendDeadlines = new SendDeadlines(
    { stallMs: resolved.sendTimeout * 1000, minRate: resolved.minSendRate },
    cutOff,
  );
  const respond = (exchange: Exchange): void => {
    exchange.respond(responseFailed);
    // The pipeline's state is there unless a user's middleware answered before it ran. An answer that left
    // Node whole in one write (most) has nothing for a client to stall: it is not even offered to the watch.
    const res = exchange.res;
    if (
      exchange.onClose &&
      (exchange.sendUntil !== undefined || !res.writableEnded || res.writableLength > 0)
    )
      sendDeadlines.watch(res, exchange.onClose, exchange.sendUntil);
  };
  const failed = (exchange: Exchange, err: unknown): void => {
    // The pipeline answers every error itself; getting here is a bug in it.
    responseFailed(err instanceof Error ? err : new Error(String(err)), exchange.requestId);
    if (!exchange.res.headersSent) exchange.res.statusCode = 500;
    exchange.res.end();
  };

  // Node's request listener: one Exchange, the pipeline, the answer written once (no promise of its own).
  const listener = (req: IncomingMessage, res: ServerResponse): void => {
    pipeline(new Exchange(req, res, NO_KOA, reading, service.state), routed, respond, failed);
  };
  const handle = (req: IncomingMessage, res: ServerResponse): Promise<void> =>
    new Promise<void>((resolve) => {
      pipeline(
        new Exchange(req, res, NO_KOA, reading, service.state),
        routed,
        (answered) => {
          respond(answered);
          resolve();
        },
        (broken, err) => {
          failed(broken, err);
          resolve();
        },
      );
    });

  // Koa runs the user's middleware in front of the pipeline; the response is still written by `respond`.
  const app = new ServiceKoa(
    (req, res) => new Exchange(req, res, VIA_KOA, reading, service.state),
    (exchange, ctx) => {
      // Mounts run on the context the request came with, so they see what the app's middleware put there.
      if (service.mounts.length > 0) {
        koaContexts.set(exchange, ctx as unknown as Koa.ParameterizedContext<MountState>);
      }
      return new Promise<void>((resolve, reject) =>
        pipeline(
          exchange,
          routed,
          () => resolve(),
          (_, err) => reject(err),
        ),
      );
    },
    (exchange, err) => {
      // A user's middleware threw: answer with the one error body.
      if (exchange.res.headersSent) return failed(exchange, err);
      exchange.requestId ||= requestIdFor(exchange.get('x-request-id') || undefined);
      writeError(exchange, err, logger, resolved.metrics ? metrics : undefined);
      exchange.set('x-request-id', exchange.requestId);
      respond(exchange);
    },
    respond,
  );
  app.silent = true;

  const requestListener = (): ((req: IncomingMessage, res: ServerResponse) => void) => {
    // `handle` answers every error itself; its promise is not needed.
    return app.middleware.length !== 1 ? app.callback() : listener;
  };

  return { app, lifecycle, options: resolved, logger, metrics, runtime, cache, handle, requestListener };
}

/** Requests through the Koa app keep their headers on `res`, where the user's middleware sees them. */
const VIA_KOA = { headersOnResponse: true };
const NO_KOA = { headersOnResponse: false };

/** Koa's `ctx.state` in the app: the exchange the pipeline answers on. */
export interface KoaState {
  exchange: Exchange;
}

/**
 * The Koa app: the user's middleware, then the pipeline as the last middleware. Its `callback()` (Koa's
 * documented way to get a request listener) composes that middleware itself and switches Koa's response
 * handling off for the request (`ctx.respond = false`, Koa's documented switch): the exchange writes the
 * response once every middleware returned (headers a middleware sets after `await next()` are kept), through
 * the same `respond` as requests served without Koa, and a middleware's error gets the one error body.
 */
class ServiceKoa extends Koa<KoaState> {
  constructor(
    private readonly exchangeFor: (req: IncomingMessage, res: ServerResponse) => Exchange,
    private readonly runPipeline: (
      exchange: Exchange,
      ctx: Koa.ParameterizedContext<KoaState>,
    ) => Promise<void>,
    private readonly middlewareFailed: (exchange: Exchange, err: unknown) => void,
    private readonly respondTo: (exchange: Exchange) => void,
  ) {
    super();
    this.use((ctx) => this.runPipeline(ctx.state.exchange, ctx));
  }

  override callback(): ReturnType<Koa<KoaState>['callback']> {
    const run = compose(this.middleware);
    // Served over node:http (Koa's type also admits HTTP/2's compatibility objects, which the exchange does not).
    return (request, response) => {
      const req = request as IncomingMessage;
      const res = response as ServerResponse;
      const ctx = this.createContext<KoaState>(req, res);
      ctx.respond = false;
      const exchange = this.exchangeFor(req, res);
      ctx.state.exchange = exchange;
      return run(ctx).then(
        () => this.respondTo(exchange),
        (err: unknown) => this.middlewareFailed(exchange, err),
      );
    };
  }
}
