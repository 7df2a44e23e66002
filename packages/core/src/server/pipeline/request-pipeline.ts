import { GatewayTimeout } from '../../errors/index.js';
import type { AuthCheck } from '../auth.js';
import type { Exchange } from '../exchange.js';
import { LazyAbort } from '../lazy-abort.js';
import type { AppLifecycle } from '../lifecycle.js';
import { type Logger, silentLogger } from '../logger.js';
import type { ServerMetrics } from '../metrics.js';
import { NOSNIFF } from '../raw-answers.js';
import { requestIdFor } from '../request-id.js';
import type { RouteTable } from '../routes/route-table.js';
import { type ConcurrencyGate, UNLIMITED_PATHS } from './concurrency-gate.js';
import { Deadlines } from './deadline.js';
import { writeError } from './write-error.js';

/** A step around the routed handler (CORS): call `next` to go on. */
export type PipelineStage = (ctx: Exchange, next: () => Promise<void>) => Promise<void>;

/** Runs one request through the pipeline; `dispatch` answers it once it passed the gate and the deadline. */
export type RequestPipeline = (ctx: Exchange, dispatch: () => Promise<void>) => Promise<void>;

export interface RequestPipelineDeps {
  /** Route lookup (the matched path labels metrics; the API sets the timeout). */
  routes: Pick<RouteTable, 'match'>;
  lifecycle: AppLifecycle;
  gate: ConcurrencyGate;
  /** Seconds before a response must start; an API's own `timeout` wins. */
  timeout: number;
  /** Absent when metrics are off. */
  metrics: ServerMetrics | undefined;
  logger: Logger;
  /** Runs before the concurrency gate (so refused preflights and CORS headers never take a permit). */
  cors: PipelineStage | undefined;
  /** Bearer-token check (absent when no token is set); after CORS, so a 401 still carries CORS headers. */
  auth: AuthCheck | undefined;
}

const HEALTH_PATHS: ReadonlySet<string> = new Set(['/livez', '/healthz', '/readyz']);

/**
 * The whole per-request path of the server as one function (the Koa app's only middleware, and the direct
 * API path's), in this order: request id and route, abort on client disconnect, in-flight tracking, metrics,
 * the error answer (D4), CORS, the concurrency gate (503), the deadline (504), the routed handler; then
 * `x-request-id` and one access-log line. One function instead of a middleware per concern: each layer costs
 * an async frame, a closure and header work per request.
 */
export function requestPipeline(deps: RequestPipelineDeps): RequestPipeline {
  const { routes, lifecycle, gate, metrics, logger, cors, auth } = deps;
  const logging = logger !== silentLogger;
  const deadlines = new Deadlines();

  const routed = async (ctx: Exchange, dispatch: () => Promise<void>): Promise<void> => {
    if (auth) {
      const denied = auth(ctx.path, ctx.get('authorization'));
      if (denied) throw denied;
    }
    // Health paths skip the concurrency gate (D5), not the deadline (spec 10.6: it applies to every path).
    if (UNLIMITED_PATHS.has(ctx.path)) return runWithDeadline(ctx, dispatch);
    const release = gate.enter();
    ctx.state.onClose.push(release);
    try {
      await runWithDeadline(ctx, dispatch);
    } catch (err) {
      release();
      throw err;
    }
  };

  const runWithDeadline = async (ctx: Exchange, dispatch: () => Promise<void>): Promise<void> => {
    const seconds = ctx.state.api?.timeout ?? deps.timeout;
    const work = dispatch();
    if ((await deadlines.wait(work, seconds, ctx.state.startedAt)) === 'done') return;
    ctx.state.timedOut = true;
    const error = new GatewayTimeout(`Not able to process the request in ${seconds} seconds`);
    ctx.state.abort.abort(error);
    // The handler keeps running until it notices the abort; its result or error is only logged.
    work.catch((err: unknown) =>
      logger.log('warn', 'handler failed after its timeout', {
        requestId: ctx.state.requestId,
        error: err instanceof Error ? err.message : String(err),
      }),
    );
    throw error;
  };

  const inner = cors
    ? (ctx: Exchange, dispatch: () => Promise<void>) => cors(ctx, () => routed(ctx, dispatch))
    : routed;

  return async (ctx, dispatch) => {
    const start = performance.now();
    const requestId = requestIdFor(ctx.get('x-request-id') || undefined);
    const path = ctx.path;
    const match = routes.match(path);
    const abort = new LazyAbort();
    const onClose: Array<() => void> = [lifecycle.requestStarted()];
    const state = ctx.state;
    state.requestId = requestId;
    state.endpoint = match?.path ?? 'unmatched';
    state.api = match?.api;
    state.abort = abort;
    state.timedOut = false;
    state.onClose = onClose;
    state.startedAt = start;
    // One listener per request; the others register callbacks in `onClose`.
    const res = ctx.res;
    res.setHeader(NOSNIFF[0], NOSNIFF[1]);
    // `on`, not `once`: the response is used once anyway, and once() wraps the listener per request.
    res.on('close', () => {
      if (!res.writableFinished) abort.abort(new Error('client disconnected'));
      for (const fn of onClose) fn();
    });
    const recordMetrics =
      metrics && path !== '/metrics'
        ? metrics.start(state.endpoint, HEALTH_PATHS.has(path), start)
        : undefined;
    try {
      await inner(ctx, dispatch);
    } catch (err) {
      writeError(ctx, err, logger);
    }
    recordMetrics?.(ctx.status);
    ctx.set('x-request-id', requestId);
    if (lifecycle.isDraining) ctx.set('connection', 'close');
    if (logging)
      logger.log('info', 'request', {
        requestId,
        method: ctx.method,
        path,
        status: ctx.status,
        requestType: ctx.get('content-type') || undefined,
        requestLength: ctx.get('content-length') || undefined,
        responseType: ctx.response.get('content-type') || undefined,
        ms: performance.now() - start,
      });
  };
}
