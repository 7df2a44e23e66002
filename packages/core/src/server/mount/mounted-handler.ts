import type Koa from 'koa';
import type { ParameterizedContext } from 'koa';
import compose from 'koa-compose';
import type { Unauthorized } from '../../errors/index.js';
import { httpCallOptions } from '../../runtime/admission/call-options.js';
import { timeoutOfField } from '../../runtime/admission/client-timeout.js';
import { urgencyOf } from '../../runtime/admission/priority.js';
import type { Invocation } from '../../runtime/invocation.js';
import type { MountState } from '../../service/mount-state.js';
import type { MountedMiddleware } from '../../service/service.js';
import type { AuthCheck } from '../auth.js';
import type { BodyReading, Exchange } from '../exchange.js';
import { readBody, refuseDeclaredOverLimit } from '../read-body.js';
import type { RouteTable } from '../routes/route-table.js';
import { GROUP_BODY_LIMIT, type GroupScopeDeps, inGroup } from './group-scope.js';
import { koaAnswered, takeKoaAnswer } from './koa-answer.js';
import { removeUploadedFiles } from './uploaded-files.js';

export type { MountState } from '../../service/mount-state.js';

export interface MountedHandlerDeps {
  mounts: readonly MountedMiddleware[];
  routes: Pick<RouteTable, 'match' | 'dispatch'>;
  /** The Koa context of a request: the one it came through the Koa app with, else a new one of the app. */
  koaContext: (exchange: Exchange) => ParameterizedContext<MountState>;
  /** How the server reads a body (its limit, stall timeout and budget), for `ctx.state.body()`. */
  reading: Pick<BodyReading, 'maxBodySize' | 'bodyTimeoutMs' | 'budget'>;
  /**
   * Set when some mount is public or a route group: the pipeline then leaves the token check to this stage, which
   * runs public mounts without it, groups under their own auth mode and the rest (private mounts, the routes) only
   * with it.
   */
  auth: AuthCheck | undefined;
  /** Make the request's deadline `seconds` from its start (undefined: the server's); see `Runtime.retime`. */
  retime: (exchange: Exchange, seconds: number | undefined) => void;
  /** A slot of an API's own queue for the request (`Runtime.admitTo`); undefined for an API without one. */
  admitTo: (exchange: Exchange, api: string) => Promise<void> | undefined;
}

/** Metrics label of an answer from a mount that no router named a route for (a constant: bounded labels). */
export const MOUNTED_ENDPOINT = 'mounted';

/**
 * The routed handler of a service with mounted middleware: the request's Koa context goes through the mounts in
 * order, and the last `next()` reaches the route table (APIs, API page, probes). It runs where the route table's
 * dispatch runs without mounts, inside the one request pipeline (request id, access log, metrics, error body,
 * CORS, gate, deadline, drain), and the exchange writes the answer, whoever gave it. A mount answers by setting
 * `ctx.body` or `ctx.status`; when none does and no route matched, the table answers (404, 405, 307).
 */
export function mountedHandler(deps: MountedHandlerDeps): (exchange: Exchange) => Promise<void> {
  const { routes, koaContext, reading, auth, retime } = deps;
  const maxBodySize = reading.maxBodySize;
  // With no mount of its own deadline, every request keeps the server's (or its API's): nothing to wrap.
  const timed = deps.mounts.some((m) => m.timeout !== undefined);
  const scope: GroupScopeDeps = {
    exchangeOf: (ctx) => (ctx.state as StateOf)[EXCHANGE] as Exchange,
    deniedOf: (ctx) => DENIED.get(ctx) ?? null,
    tokenSet: auth !== undefined,
    maxBodySize,
  };
  const chain = deps.mounts.map(({ middleware, public: open, timeout, group }) => {
    const own = timed ? underOwnDeadline(middleware, timeout, retime) : middleware;
    // A group answers its own paths under its rules (auth mode included); other requests pass it by at once.
    if (group) return inGroup(own, group, scope);
    // A private mount is passed over for a request without the token (the routes then answer 401).
    return open || !auth ? own : skippedWhenDenied(own);
  });
  // Koa's own composition (one `next()` per middleware, in order); the last `next()` reaches the routes.
  const run = compose(chain);

  return async (exchange) => {
    const declared = exchange.get('content-length');
    refuseDeclaredOverLimit(declared, maxBodySize);
    const denied = auth ? auth(exchange.path, exchange.get('authorization')) : null;
    const ctx = koaContext(exchange);
    if (timed) (ctx as Tagged)[EXCHANGE] = exchange;
    ctx.state.requestId = exchange.requestId;
    // A getter: the signal (microseconds to make on Node 20) is made only for a route that reads it.
    (ctx.state as StateOf)[EXCHANGE] = exchange;
    Object.defineProperty(ctx.state, 'signal', SIGNAL);
    (ctx.state as StateOf)[READING] = reading;
    (ctx.state as StateOf)[ADMIT] = deps.admitTo;
    ctx.state.body = readMountBody;
    ctx.state.queue = queueMount;
    exchange.onClose.push(() => removeUploadedFiles(ctx.request));
    if (denied) DENIED.set(ctx, denied);
    // The status the context shows once the mounts passed the request on: Koa's 404, or the routes' answer.
    let passedStatus = 404;
    let routed = false;
    try {
      await run(ctx as ParameterizedContext, () => {
        if (denied) return Promise.reject(denied);
        // Past the mounts, the built-in routes (the API page, probes) have the server's deadline.
        if (timed) retime(exchange, undefined);
        if (routes.match(exchange.path) === undefined) return Promise.resolve();
        routed = true;
        return Promise.resolve(routes.dispatch(exchange)).then(() => {
          // Middleware after `await next()` sees the answer's status (a `ctx.status === 404` check works);
          // the body stays the exchange's.
          passedStatus = exchange.status;
          ctx.res.statusCode = passedStatus;
        });
      });
    } catch (err) {
      exchange.endpoint = matchedRoute(ctx) ?? exchange.endpoint;
      throw err;
    }
    if (exchange.timedOut) {
      // The 504 went out already; a late stream answer is not sent.
      const late = ctx.body as { destroy?: () => void } | null;
      if (late && typeof late.destroy === 'function') late.destroy();
      return;
    }
    if (koaAnswered(ctx, passedStatus)) {
      exchange.endpoint = matchedRoute(ctx) ?? MOUNTED_ENDPOINT;
      takeKoaAnswer(ctx, exchange);
    } else if (!routed) {
      await routes.dispatch(exchange);
    }
  };
}

/**
 * Where a Koa context keeps its request's exchange, for the mounts' deadlines (`underOwnDeadline`), and its
 * `ctx.state` too, for the signal's getter.
 */
const EXCHANGE = Symbol('tiffin.exchange');
type Tagged = ParameterizedContext & { [EXCHANGE]?: Exchange };
type StateOf = MountState & {
  [EXCHANGE]?: Exchange;
  [GROUP_BODY_LIMIT]?: number;
  [READING]?: MountedHandlerDeps['reading'];
  [BODY]?: Promise<Buffer>;
  [ADMIT]?: MountedHandlerDeps['admitTo'];
};
const READING = Symbol('tiffin.reading');
const ADMIT = Symbol('tiffin.admit');
const BODY = Symbol('tiffin.body');

/** `ctx.state.body`: one function for every request (no closure per request), read through `readBody`. */
function readMountBody(this: StateOf, maxBytes?: number): Promise<Buffer> {
  const exchange = this[EXCHANGE] as Exchange;
  const reading = this[READING] as MountedHandlerDeps['reading'];
  // Within a group, its bound is the default and the cap.
  const cap = this[GROUP_BODY_LIMIT] ?? reading.maxBodySize;
  const limit = maxBytes === undefined ? cap : Math.min(Math.max(0, maxBytes), cap);
  this[BODY] ??= readBody(
    exchange.req,
    limit,
    reading.bodyTimeoutMs,
    reading.budget?.reservationFor(exchange),
  );
  return this[BODY];
}

/**
 * `ctx.state.queue`: the request waits in an API's queue as a call of it would, ordered by its `Priority`
 * (docs/spec/io-descriptors.md §10.9) and counted against its client's share.
 */
function queueMount(this: StateOf, api: string): Promise<void> {
  const exchange = this[EXCHANGE] as Exchange;
  const call: Invocation = exchange;
  const fields = httpCallOptions(exchange.req);
  const urgency = urgencyOf(fields.priority);
  if (urgency !== undefined) call.urgency = urgency;
  call.client = fields.client;
  // `Tiffin-Timeout` shortens the request's deadline as a call's (400 `INVALID_TIMEOUT` when unusable), the
  // wait included: the runtime counts the deadline again before the request queues.
  try {
    const timeout = timeoutOfField(fields.timeout);
    if (timeout !== undefined) call.clientTimeout = timeout;
  } catch (err) {
    return Promise.reject(err);
  }
  return (this[ADMIT] as MountedHandlerDeps['admitTo'])(exchange, api) ?? Promise.resolve();
}

/** `ctx.state.signal`: one getter for every request (no closure per request). */
const SIGNAL: PropertyDescriptor = {
  get(this: StateOf): AbortSignal | undefined {
    return this[EXCHANGE]?.signal;
  },
  enumerable: true,
  configurable: true,
};

/**
 * A mount under its own deadline (docs/server.md, your own routes): while the request is in it, its deadline is
 * the mount's `timeout` (none: the server's) counted from the request's start. Mounts run as one chain, so
 * entering one sets its deadline, the next one's `next()` sets that one's, and coming back from `next()` sets
 * this one's again. An API call keeps its API's deadline (`Runtime.retime`).
 */
function underOwnDeadline(
  middleware: Koa.Middleware,
  seconds: number | undefined,
  retime: MountedHandlerDeps['retime'],
): Koa.Middleware {
  return (ctx, next) => {
    const exchange = (ctx as Tagged)[EXCHANGE] as Exchange;
    if (exchange.api) return middleware(ctx, next);
    retime(exchange, seconds);
    const back = (): void => retime(exchange, seconds);
    return middleware(ctx, () =>
      next().then(back, (err: unknown) => {
        back();
        throw err;
      }),
    );
  };
}

/** Koa contexts of requests without the API token, with their 401 (private mounts pass them on). */
const DENIED = new WeakMap<object, Unauthorized>();

function skippedWhenDenied(middleware: Koa.Middleware): Koa.Middleware {
  return (ctx, next) => (DENIED.has(ctx) ? next() : middleware(ctx, next));
}

/** The route pattern `@koa/router` matched (its `_matchedRoute`), never the raw path. */
function matchedRoute(ctx: ParameterizedContext): string | undefined {
  const route = (ctx as { _matchedRoute?: unknown })._matchedRoute;
  return typeof route === 'string' || route instanceof RegExp ? String(route) : undefined;
}
