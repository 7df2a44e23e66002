import Koa from 'koa';
import { buildOpenApiDocument } from '../openapi/document.js';
import type { Service } from '../service/service.js';
import { JsonLineLogger, type Logger, silentLogger } from './logger.js';
import { ServerMetrics } from './metrics.js';
import { concurrencyLimit } from './middleware/concurrency.js';
import { corsMiddleware } from './middleware/cors.js';
import { errorHandler } from './middleware/error-handler.js';
import { metricsMiddleware } from './middleware/metrics.js';
import { requestContext } from './middleware/request-context.js';
import { timeoutMiddleware } from './middleware/timeout.js';
import { type ResolvedServerOptions, resolveServerOptions, type ServerOptions } from './options.js';
import { apiHandler } from './routes/api.js';
import { ApiPage } from './routes/api-page.js';
import { liveHandler, readyHandler } from './routes/health.js';
import { metricsHandler } from './routes/metrics.js';
import { RouteTable } from './routes/route-table.js';
import type { RequestState } from './state.js';

/** Readiness and shutdown of one app: startup hooks before ready, drain before shutdown hooks. */
export class AppLifecycle {
  private ready = false;
  private draining = false;
  private inFlight = 0;
  private idleWaiters: Array<() => void> = [];
  private shutdownPromise: Promise<void> | undefined;

  constructor(private readonly service: Service) {}

  get isReady(): boolean {
    return this.ready && !this.draining;
  }

  get isDraining(): boolean {
    return this.draining;
  }

  /** Requests whose handling has not finished. */
  get activeRequests(): number {
    return this.inFlight;
  }

  /** Run the service's startup hooks, then mark the app ready. */
  async startup(): Promise<void> {
    await this.service.startup();
    this.ready = true;
  }

  /** Stop being ready (readyz → 503); in-flight requests continue. */
  beginDrain(): void {
    this.draining = true;
  }

  /** Resolves when no request is in flight (or after `timeoutMs`); true when drained. */
  waitForIdle(timeoutMs: number): Promise<boolean> {
    if (this.inFlight === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.idleWaiters = this.idleWaiters.filter((w) => w !== done);
        resolve(false);
      }, timeoutMs);
      const done = () => {
        clearTimeout(timer);
        resolve(true);
      };
      this.idleWaiters.push(done);
    });
  }

  /** Run the shutdown hooks once. */
  shutdown(): Promise<void> {
    this.beginDrain();
    this.shutdownPromise ??= this.service.shutdown();
    return this.shutdownPromise;
  }

  /** Koa middleware counting requests until their response is fully sent. */
  tracker(): Koa.Middleware<RequestState> {
    return async (_ctx, next) => {
      this.inFlight++;
      let counted = true;
      _ctx.state.onClose.push(() => {
        if (counted) {
          counted = false;
          this.inFlight--;
          if (this.inFlight === 0) {
            const waiters = this.idleWaiters;
            this.idleWaiters = [];
            for (const w of waiters) w();
          }
        }
      });
      await next();
    };
  }
}

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
  app.use(requestContext({ routes, logger, isDraining: () => lifecycle.isDraining }));
  app.use(lifecycle.tracker());
  if (resolved.metrics) app.use(metricsMiddleware(metrics));
  app.use(errorHandler(logger));
  if (resolved.cors.enabled) app.use(corsMiddleware(resolved.cors));
  app.use(concurrencyLimit(resolved.maxConcurrency, resolved.retryAfter));
  app.use(timeoutMiddleware(resolved.timeout, logger));
  app.use(routes.middleware());
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
