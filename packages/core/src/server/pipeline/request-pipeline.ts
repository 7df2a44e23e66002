import type { ServerResponse } from 'node:http';
import type { Tracer } from '@opentelemetry/api';
import { type AccessLogEntry, type Logger, silentLogger } from '../../logging/logger.js';
import { UNLIMITED_PATHS } from '../../runtime/concurrency-gate.js';
import { LazyAbort } from '../../runtime/lazy-abort.js';
import type { Runtime } from '../../runtime/runtime.js';
import type { ErrorHook, RequestHook, RequestHooks } from '../../service/request-hooks.js';
import { CallTrace } from '../../tracing/call-trace.js';
import { withCall } from '../../tracing/tracing.js';
import type { AuthCheck } from '../auth.js';
import { type BodyGuardOptions, guardBody } from '../body-guard.js';
import type { Exchange } from '../exchange.js';
import type { AppLifecycle } from '../lifecycle.js';
import type { ServerMetrics } from '../metrics.js';
import { NOSNIFF } from '../raw-answers.js';
import { requestIdFor } from '../request-id.js';
import type { RouteTable } from '../routes/route-table.js';
import { ClientDisconnected } from './client-disconnected.js';
import { endHttpCall, httpServerCall } from './http-span.js';
import { writeError } from './write-error.js';

/** A step around the routed handler (CORS): call `next` to go on. */
export type PipelineStage = (ctx: Exchange, next: () => Promise<void>) => Promise<void>;

/**
 * Answers a request that passed the gate and the deadline (the route table, or the mounts in front of it):
 * undefined when it answered at once, else a promise.
 */
export type Dispatch = (ctx: Exchange) => Promise<void> | undefined;

/**
 * Runs one request through the pipeline: `dispatch` answers it once it passed the gate and the deadline;
 * `answered` is called once the exchange holds the whole answer (error answers included), `broken` should
 * the pipeline itself fail (a bug: the caller answers 500). Callbacks, not a promise: on the path of every
 * request, each promise layer costs an allocation and a microtask turn.
 */
export type RequestPipeline = (
  ctx: Exchange,
  dispatch: Dispatch,
  answered: (ctx: Exchange) => void,
  broken: (ctx: Exchange, err: unknown) => void,
) => void;

export interface RequestPipelineDeps {
  /** Route lookup (the matched path labels metrics; the API sets the timeout). */
  routes: Pick<RouteTable, 'match'>;
  lifecycle: AppLifecycle;
  /** Owns the concurrency gate and the deadline (shared with the gRPC transport). */
  runtime: Runtime;
  /** Absent when metrics are off. */
  metrics: ServerMetrics | undefined;
  logger: Logger;
  /** Runs before the concurrency gate (so refused preflights and CORS headers never take a permit). */
  cors: PipelineStage | undefined;
  /** Bearer-token check (absent when no token is set); after CORS, so a 401 still carries CORS headers. */
  auth: AuthCheck | undefined;
  /** Size limit and stall timeout of a body the server does not read itself (a mounted route's). */
  body: BodyGuardOptions;
  /** The service's `onRequest`, `onResponse` and `onError` hooks (read per request: empty lists cost nothing). */
  hooks: RequestHooks;
  /** Traces every request when set (docs/observability.md); absent: no span is made. */
  tracer: Tracer | undefined;
  /** Whether API answers carry `Server-Timing` (queue, decode, run, encode). */
  serverTiming: boolean;
}

/** A promise that never settles: the side of a race that must not win. */
const NEVER = new Promise<never>(() => {});

/** Whether the request carries a body (a declared non-zero length, or a chunked one). */
function hasBody(ctx: Exchange): boolean {
  const length = ctx.get('content-length');
  return length !== '' ? length !== '0' : ctx.get('transfer-encoding') !== '';
}

const HEALTH_PATHS: ReadonlySet<string> = new Set(['/livez', '/healthz', '/readyz']);

/** Where a response keeps the exchange it answers, for the pipeline's one 'close' listener. */
const EXCHANGE = Symbol('tiffin.exchange');
type AnsweredBy = ServerResponse & { [EXCHANGE]?: Exchange };

/**
 * The whole per-request path of the HTTP server as one function, in this order: request id and route, abort on
 * client disconnect, in-flight tracking, metrics, the error answer (docs/spec/io-descriptors.md D4), CORS, the runtime's concurrency gate
 * (503) and deadline (504), the routed handler; then `x-request-id` and one access-log line. One function
 * instead of a middleware per concern: each layer costs an async frame, a closure and header work per request.
 */
export function requestPipeline(deps: RequestPipelineDeps): RequestPipeline {
  const { routes, lifecycle, runtime, metrics, logger, cors, auth, body, hooks, tracer, serverTiming } = deps;
  const logging = logger !== silentLogger;

  // The route's work, not under the deadline yet (the caller puts it there): undefined when it answered at once.
  // Not async: a throw here (auth, a full gate) reaches the caller's try/catch, one promise less.
  const routed = (ctx: Exchange, dispatch: Dispatch): Promise<void> | undefined => {
    if (auth) {
      const denied = auth(ctx.path, ctx.get('authorization'));
      if (denied) throw denied;
    }
    // Health paths skip the concurrency gate (D5), not the deadline (docs/spec/io-descriptors.md §10.6: it applies to every path).
    // API routes take their permit themselves once the body is in, so a client that stalls mid-body holds none;
    // other routes with a body (mounted ones) take it once the body arrived, whoever reads it.
    if (!ctx.api && !UNLIMITED_PATHS.has(ctx.path)) {
      if (hasBody(ctx)) return admittedAfterBody(ctx, dispatch);
      runtime.admit(ctx);
    }
    return dispatch(ctx);
  };

  /**
   * Run `dispatch` at once (a mounted parser reads the body as it comes) and take the permit when the body
   * has arrived; a stalled, oversized or refused (503) body answers its error now, and the handler's late
   * answer is dropped, as after a timeout.
   */
  const admittedAfterBody = async (ctx: Exchange, dispatch: Dispatch): Promise<void> => {
    const guard = guardBody(ctx.req, body, runtime.bodyBudget.reservationFor(ctx));
    // As a promise, a throw included: the guard is stopped however the route ends.
    let work: Promise<void>;
    try {
      work = Promise.resolve(dispatch(ctx));
    } catch (err) {
      work = Promise.reject(err);
    }
    const admitted = guard.arrived.then(() => {
      runtime.admit(ctx);
      return NEVER;
    });
    try {
      await Promise.race([work, admitted]);
    } catch (err) {
      if (!ctx.timedOut) {
        ctx.timedOut = true;
        work.catch(() => {});
        ctx.abort.abort(err);
      }
      throw err;
    } finally {
      guard.stop();
    }
  };

  /**
   * The route's work under the request's deadline, as a promise: with CORS (which runs outside the deadline)
   * or `onRequest` hooks (inside it: a hook that never settles is answered 504, not held).
   */
  const guarded = async (ctx: Exchange, dispatch: Dispatch): Promise<void> => {
    // An API route one turn later, as on the fast path (`proceed`): a body that came with the headers is then
    // in the request's buffer.
    if (ctx.api) await undefined;
    if (hooks.onRequest.length > 0) await runtime.withDeadline(ctx, runHooks(hooks.onRequest, ctx));
    const underDeadline = () => runtime.withDeadline(ctx, Promise.resolve(routed(ctx, dispatch)));
    if (cors) await cors(ctx, underDeadline);
    else await underDeadline();
  };

  /**
   * The route's work on the fast path (no CORS, no `onRequest` hooks); for an API route one tick after the
   * request listener: a body that came with the headers is in the request's buffer by then, so the route can
   * answer at once. Its end, or its error, settles the request (`end`). Work still running after its first
   * slice is watched by the request's deadline (counted from the request's start); an answer given at once
   * needs no watch.
   */
  const proceed = (ctx: Exchange, dispatch: Dispatch, end: (err: unknown, failed: boolean) => void): void => {
    let work: Promise<void> | undefined;
    try {
      work = routed(ctx, dispatch);
    } catch (err) {
      end(err, true);
      return;
    }
    if (work === undefined) {
      end(undefined, false);
      return;
    }
    ctx.deadlineWatch = runtime.watchDeadline(ctx, (timeout) => end(timeout, true));
    work.then(
      () => end(undefined, false),
      (err: unknown) => end(err, true),
    );
  };

  /** The answer is in the exchange (or `err` is to be answered): hooks, metrics, `x-request-id`, the log line. */
  const finish = (ctx: Exchange, err: unknown, failed: boolean): void | Promise<void> => {
    if (hooks.onError.length > 0 || hooks.onResponse.length > 0) return finishWithHooks(ctx, err, failed);
    // A health check's 503 says the server is not ready: nothing was shed.
    if (failed) writeError(ctx, err, logger, HEALTH_PATHS.has(ctx.path) ? undefined : metrics);
    conclude(ctx);
  };

  const finishWithHooks = async (ctx: Exchange, err: unknown, failed: boolean): Promise<void> => {
    if (failed) {
      if (hooks.onError.length > 0) await runErrorHooks(hooks.onError, ctx, err, logger);
      writeError(ctx, err, logger, HEALTH_PATHS.has(ctx.path) ? undefined : metrics);
    }
    if (hooks.onResponse.length > 0) {
      try {
        await runHooks(hooks.onResponse, ctx);
      } catch (hookErr) {
        hookFailed(logger, 'onResponse', ctx, hookErr);
      }
    }
    conclude(ctx);
  };

  /** The request's last steps once answered: metrics, `x-request-id`, `connection: close` when draining, the log line. */
  const conclude = (ctx: Exchange): void => {
    const path = ctx.path;
    const start = ctx.startedAt;
    // The endpoint as routed: a mounted route's pattern is known only once it answered.
    const timeline = ctx.trace;
    if (ctx.inProgress)
      metrics?.finish(
        ctx.inProgress,
        ctx.status,
        ctx.endpoint,
        start,
        HEALTH_PATHS.has(path),
        // A sampled request's trace becomes its latency bucket's exemplar.
        timeline?.sampledTraceId,
      );
    ctx.setChecked('x-request-id', ctx.requestId);
    if (serverTiming && timeline && ctx.api) ctx.setChecked('server-timing', timeline.serverTiming());
    if (lifecycle.isDraining) ctx.set('connection', 'close');
    if (logging) {
      const entry: AccessLogEntry = {
        requestId: ctx.requestId,
        method: ctx.method,
        path,
        status: ctx.status,
        requestType: ctx.get('content-type') || undefined,
        requestLength: ctx.get('content-length') || undefined,
        responseType: ctx.responseHeader('content-type') || undefined,
        // To the microsecond: the digits beyond are noise, and a shorter number is cheaper to write.
        ms: Math.round((performance.now() - start) * 1000) / 1000,
      };
      if (timeline?.span) entry.traceId = timeline.traceId;
      if (logger.access) logger.access(entry);
      else logger.log('info', 'request', { ...entry });
    }
  };

  /** A response closed (sent, or its client gone): the request is over. `this` is the response. */
  function closed(this: AnsweredBy): void {
    const ctx = this[EXCHANGE] as Exchange;
    // Counted out first: a close callback that throws must not leave the request in flight (drain waits on it).
    lifecycle.requestEnded();
    if (!this.writableFinished) ctx.abort.abort(new ClientDisconnected());
    if (ctx.trace?.span) endHttpCall(ctx);
    for (const fn of ctx.onClose) fn();
  }

  /** The request's route work, on the fast path or (CORS, `onRequest` hooks) as a promise. */
  const begin = (ctx: Exchange, dispatch: Dispatch, end: (err: unknown, failed: boolean) => void): void => {
    if (cors || hooks.onRequest.length > 0) {
      guarded(ctx, dispatch).then(
        () => end(undefined, false),
        (err: unknown) => end(err, true),
      );
      return;
    }
    // An API route runs a tick later (its body is then in the buffer); any other at once, so that the guard of
    // a body it does not read itself (`admittedAfterBody`) sees every byte arrive.
    if (ctx.api) process.nextTick(proceed, ctx, dispatch, end);
    else proceed(ctx, dispatch, end);
  };

  return (ctx, dispatch, answered, broken) => {
    const start = performance.now();
    const requestId = requestIdFor(ctx.get('x-request-id') || undefined);
    const path = ctx.path;
    const match = routes.match(path);
    const abort = new LazyAbort();
    const onClose: Array<() => void> = [];
    lifecycle.requestStarted();
    ctx.requestId = requestId;
    ctx.endpoint = match?.path ?? 'unmatched';
    ctx.api = match?.api;
    ctx.abort = abort;
    ctx.timedOut = false;
    ctx.onClose = onClose;
    ctx.startedAt = start;
    // One listener per request; the others register callbacks in `onClose`.
    const res = ctx.res;
    ctx.setChecked(NOSNIFF[0], NOSNIFF[1]);
    // One listener, the same function for every request (it finds the exchange on the response); `on`, not
    // `once`: the response is used once anyway, and once() wraps the listener per request.
    (res as AnsweredBy)[EXCHANGE] = ctx;
    res.on('close', closed);
    ctx.inProgress = metrics && path !== '/metrics' ? metrics.start(ctx.endpoint) : undefined;
    if (tracer) ctx.trace = httpServerCall(tracer, ctx, match?.path);
    else if (serverTiming && match?.api) ctx.trace = new CallTrace(undefined, undefined, undefined);

    // Settled once: by the work, or by its deadline first (the work's late end is then only logged).
    let settled = false;
    const end = (err: unknown, failed: boolean): void => {
      if (settled) {
        if (failed) runtime.failedAfterDeadline(ctx, err);
        return;
      }
      settled = true;
      const watch = ctx.deadlineWatch;
      if (watch) runtime.clearDeadline(watch);
      try {
        const finished = finish(ctx, err, failed);
        if (finished)
          finished.then(
            () => answered(ctx),
            (bug: unknown) => broken(ctx, bug),
          );
        else answered(ctx);
      } catch (bug) {
        broken(ctx, bug);
      }
    };
    // Traced, the route, the mounts and the API function run with the request's span as the active context.
    if (tracer) withCall(ctx.trace, begin, ctx, dispatch, end);
    else begin(ctx, dispatch, end);
  };
}

/** Run `onRequest` or `onResponse` hooks in order; the first error stops them and is thrown. */
async function runHooks(list: readonly RequestHook[], call: Exchange): Promise<void> {
  for (const hook of list) await hook(call);
}

/** Run `onError` hooks in order; an error of a hook is logged and the next one still runs. */
async function runErrorHooks(
  list: readonly ErrorHook[],
  call: Exchange,
  error: unknown,
  logger: Logger,
): Promise<void> {
  for (const hook of list) {
    try {
      await hook(call, error);
    } catch (err) {
      hookFailed(logger, 'onError', call, err);
    }
  }
}

function hookFailed(logger: Logger, hook: string, call: Exchange, err: unknown): void {
  logger.log('error', `${hook} hook failed`, {
    requestId: call.requestId,
    error: err instanceof Error ? err.message : String(err),
    stack: err instanceof Error ? err.stack : undefined,
  });
}
