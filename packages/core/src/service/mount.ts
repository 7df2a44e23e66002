import type { DefaultContext, DefaultState, Middleware } from 'koa';
import { InvalidArgument } from '../errors/index.js';

/** How `Service.mount` mounts a middleware. */
export interface MountOptions {
  /**
   * Answer without the API token (`apiToken` / `$TIFFIN_API_TOKEN`): a webhook, a public page. Default false:
   * with a token set, a mounted route needs it like the APIs do.
   */
  public?: boolean;
  /**
   * Seconds a request may take before its answer starts while this mount runs it (counted from the request's
   * start), instead of the server's `timeout`, longer or shorter, as an API's own `timeout`; then the 504 is
   * sent and `ctx.state.signal` fires. An API call keeps its API's deadline (docs/server.md, your own routes).
   */
  timeout?: number;
}

/** Koa middleware mounted on a service's HTTP server, with its options (see `Service.mount`). */
export interface MountedMiddleware {
  readonly middleware: Middleware;
  readonly public: boolean;
  /** Seconds, see `MountOptions.timeout`. */
  readonly timeout?: number;
}

/** The mount `Service.mount` records, its middleware and options checked. */
export function mountedMiddleware<StateT = DefaultState, ContextT = DefaultContext>(
  middleware: Middleware<StateT, ContextT>,
  options: MountOptions,
): MountedMiddleware {
  if (typeof middleware !== 'function') {
    throw new InvalidArgument('Service.mount takes a Koa middleware: a function (ctx, next)');
  }
  // Typed as Koa's `app.use` takes it: routers extend the context with their own fields.
  const { timeout } = options;
  if (timeout !== undefined && !(Number.isFinite(timeout) && timeout > 0)) {
    throw new InvalidArgument(`Service.mount: timeout must be a positive number of seconds, got ${timeout}`);
  }
  return {
    middleware: middleware as unknown as Middleware,
    public: options.public === true,
    ...(timeout === undefined ? {} : { timeout }),
  };
}
