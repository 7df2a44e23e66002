import type { Middleware, ParameterizedContext } from 'koa';
import type { ErrorMapper } from '../errors/error-mapper.js';
import { InvalidArgument, MethodNotAllowed, NotFound, truncateForMessage } from '../errors/index.js';
import type { MountState } from './mount-state.js';

/**
 * A route group, after Fastify's encapsulated contexts: the paths under one prefix with rules of their own (who may
 * call them, the shape of their errors, their deadline and body bound), as an OpenAI- or A1111-compatible layer
 * needs them. `Service.group()` declares one from a route table; `Service.mount(router, { prefix, … })` makes a
 * user's Koa router one. The server enforces the rules for every request under the prefix (docs/server.md, route
 * groups); outside it the group's routes do not run.
 */

/**
 * Who may call a group's routes: `bearer` (default), the service's API token as everywhere (open when none is set);
 * `public`, anyone; `{ basic }`, HTTP Basic with one of the listed `user:pass` (AUTOMATIC1111's `--api-auth`), or
 * the service's API token where one is set.
 */
export type GroupAuth = 'bearer' | 'public' | { readonly basic: readonly string[] };

/** A group's rules, checked (see `RouteGroupOptions`). */
export interface GroupRules {
  /** The path the group owns with every path below it (`/sdapi/v1` owns `/sdapi/v1/txt2img`). */
  readonly prefix: string;
  readonly auth: GroupAuth;
  readonly errors: ErrorMapper | undefined;
  readonly maxBodySize: number | undefined;
}

/** The rules of a group, as `Service.mount` options take them too. */
export interface GroupOptions {
  /** The path the group owns, with every path below it: `/sdapi/v1`, `/v1`. */
  prefix: string;
  /** Who may call its routes (default `bearer`). */
  auth?: GroupAuth;
  /**
   * Its errors in its own body shape: every error answered for a request in the group (its handlers' throws, a
   * 404 or 405 of its table, the 401 of its auth, a 413 or 408 of its body, the 504 of its deadline) goes through
   * the mapper; metrics and logs keep the catalog's code.
   */
  errors?: ErrorMapper;
  /** Seconds its requests may take before their answer starts (default: the server's `timeout`). */
  timeout?: number;
  /** Most bytes `ctx.state.body()` reads for it, default and cap (at most the server's `maxBodySize`). */
  maxBodySize?: number;
}

/**
 * A group's handler: the request's Koa context, with the request's abort signal (`ctx.state.signal`) and the
 * bounded body reader (`ctx.state.body(maxBytes)`). What it returns (other than undefined) is the JSON answer; a
 * handler that sets `ctx.body` itself returns nothing. What it throws is answered through the group's mapper.
 */
export type GroupHandler = (ctx: ParameterizedContext<MountState>) => unknown;

/**
 * A group's routes: exact paths (each under the prefix) to their handlers by method; a path ending in `/*` takes
 * every path below it. GET routes answer HEAD.
 */
export type GroupRoutes = Readonly<Record<string, Readonly<Partial<Record<string, GroupHandler>>>>>;

export interface RouteGroupOptions extends GroupOptions {
  routes: GroupRoutes;
}

/** Longest `user:pass` a Basic group lists (its base64 stays far below the header bound of `basicAuth`). */
const MAX_CREDENTIALS = 1024;

/** The rules `options` declare, checked; `where` names the caller in the messages. */
export function groupRules(options: GroupOptions, where: string): GroupRules {
  const { prefix, auth = 'bearer', errors, maxBodySize } = options;
  if (
    typeof prefix !== 'string' ||
    !/^\/[\x21-\x7e]*$/.test(prefix) ||
    (prefix.length > 1 && prefix.endsWith('/'))
  )
    throw new InvalidArgument(`${where}: prefix must be a path such as /api/v1 (no trailing slash)`);
  if (auth !== 'bearer' && auth !== 'public') checkBasic(auth, where);
  if (errors !== undefined && typeof errors !== 'function')
    throw new InvalidArgument(`${where}: errors must be a function (answer) => { status, body }`);
  if (maxBodySize !== undefined && !(Number.isSafeInteger(maxBodySize) && maxBodySize > 0))
    throw new InvalidArgument(`${where}: maxBodySize must be a positive integer of bytes`);
  return { prefix, auth, errors, maxBodySize };
}

function checkBasic(auth: GroupAuth, where: string): void {
  const list = typeof auth === 'object' && auth !== null ? auth.basic : undefined;
  if (!Array.isArray(list) || list.length === 0)
    throw new InvalidArgument(`${where}: auth is 'bearer', 'public' or { basic: ['user:pass', …] }`);
  for (const pair of list as unknown[]) {
    const ok =
      typeof pair === 'string' &&
      pair.indexOf(':') > 0 &&
      Buffer.byteLength(pair) <= MAX_CREDENTIALS &&
      ![...pair].some((c) => c < ' ' || c === '\x7f');
    // The list is a secret: the message names the rule, never the value.
    if (!ok)
      throw new InvalidArgument(
        `${where}: every Basic credential is user:pass (a non-empty user, a colon, at most ${MAX_CREDENTIALS} bytes, no control characters)`,
      );
  }
}

/** Whether `path` is the group's: the prefix itself or a path below it. */
export function ownsPath(prefix: string, path: string): boolean {
  if (prefix === '/') return true;
  return path.startsWith(prefix) && (path.length === prefix.length || path.charCodeAt(prefix.length) === 47);
}

type Methods = ReadonlyMap<string, GroupHandler>;

/**
 * The Koa middleware that serves a group's table: the handler of the path and method, its returned value as the
 * JSON answer; a path of the group that no route names is a 404, a method the route lacks a 405 with `allow`
 * (both through the group's mapper).
 */
export function routeTableMiddleware(prefix: string, routes: GroupRoutes): Middleware {
  const exact = new Map<string, Methods>();
  const below: Array<[string, Methods]> = [];
  for (const [path, handlers] of Object.entries(routes)) {
    const wildcard = path.endsWith('/*');
    const base = wildcard ? path.slice(0, -1) : path;
    if (!ownsPath(prefix, wildcard ? base.slice(0, -1) || '/' : base) || base === '')
      throw new InvalidArgument(`Service.group: route ${JSON.stringify(path)} is not under ${prefix}`);
    const methods = new Map<string, GroupHandler>();
    for (const [method, handler] of Object.entries(handlers)) {
      if (typeof handler !== 'function')
        throw new InvalidArgument(`Service.group: ${method} ${path} must be a function (ctx) => answer`);
      methods.set(method.toUpperCase(), handler);
    }
    const get = methods.get('GET');
    if (get && !methods.has('HEAD')) methods.set('HEAD', get);
    if (wildcard) below.push([base, methods]);
    else exact.set(path, methods);
  }
  const lookup = (path: string): Methods | undefined =>
    exact.get(path) ?? below.find(([base]) => path.startsWith(base) && path.length > base.length)?.[1];

  return async (ctx) => {
    const methods = lookup(ctx.path);
    if (!methods) throw new NotFound(`Not Found: no route for ${ctx.method} ${truncateForMessage(ctx.path)}`);
    const handler = methods.get(ctx.method);
    if (!handler) {
      const allow = [...methods.keys()].join(', ');
      throw new MethodNotAllowed(
        `Method Not Allowed: ${ctx.method} ${truncateForMessage(ctx.path)} accepts ${allow}`,
        { headers: { allow } },
      );
    }
    const answer = await handler(ctx as ParameterizedContext<MountState>);
    if (answer !== undefined) ctx.body = answer;
  };
}
