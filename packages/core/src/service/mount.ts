import type { DefaultContext, DefaultState, Middleware } from 'koa';
import { InvalidArgument } from '../errors/index.js';
import { type GroupOptions, type GroupRules, groupRules } from './route-group.js';

/** How `Service.mount` mounts a middleware. */
export interface MountOptions extends Partial<GroupOptions> {
  /**
   * Answer without the API token (`apiToken` / `$TIFFIN_API_TOKEN`): a webhook, a public page. Default false:
   * with a token set, a mounted route needs it like the APIs do. With a `prefix`, the same as `auth: 'public'`.
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
  /** Set for a route group (a `prefix` given): the paths it owns and its rules. */
  readonly group?: GroupRules;
}

/** The mount `Service.mount` records, its middleware and options checked. */
export function mountedMiddleware<StateT = DefaultState, ContextT = DefaultContext>(
  middleware: Middleware<StateT, ContextT>,
  options: MountOptions,
  where = 'Service.mount',
): MountedMiddleware {
  if (typeof middleware !== 'function') {
    throw new InvalidArgument(`${where} takes a Koa middleware: a function (ctx, next)`);
  }
  // Typed as Koa's `app.use` takes it: routers extend the context with their own fields.
  const { timeout, prefix } = options;
  if (timeout !== undefined && !(Number.isFinite(timeout) && timeout > 0)) {
    throw new InvalidArgument(`${where}: timeout must be a positive number of seconds, got ${timeout}`);
  }
  let group: GroupRules | undefined;
  if (prefix !== undefined) {
    if (options.public === true && options.auth !== undefined && options.auth !== 'public')
      throw new InvalidArgument(`${where}: public: true and auth ${JSON.stringify(options.auth)} disagree`);
    group = groupRules({ ...options, prefix, auth: options.public ? 'public' : options.auth }, where);
  } else if (
    options.auth !== undefined ||
    options.errors !== undefined ||
    options.maxBodySize !== undefined
  ) {
    throw new InvalidArgument(`${where}: auth, errors and maxBodySize are a route group's: give its prefix`);
  }
  return {
    middleware: middleware as unknown as Middleware,
    public: group ? group.auth === 'public' : options.public === true,
    ...(timeout === undefined ? {} : { timeout }),
    ...(group ? { group } : {}),
  };
}
