import type { Middleware, ParameterizedContext } from 'koa';
import { Unauthorized } from '../../errors/index.js';
import { type GroupRules, ownsPath } from '../../service/route-group.js';
import { BASIC_CHALLENGE, basicAuth } from '../basic-auth.js';
import type { Exchange } from '../exchange.js';
import { refuseDeclaredOverLimit } from '../read-body.js';

/** Where `ctx.state` keeps the body bound of the group the request is in, for `ctx.state.body()`. */
export const GROUP_BODY_LIMIT = Symbol('tiffin.groupBodyLimit');
type GroupState = { [GROUP_BODY_LIMIT]?: number };

/** What a group's scope reads of the request the mounts run: its exchange, and the service token's verdict. */
export interface GroupScopeDeps {
  exchangeOf: (ctx: ParameterizedContext) => Exchange;
  /** The service token's 401 for this request (null: it carries the token, or none is set). */
  deniedOf: (ctx: ParameterizedContext) => Unauthorized | null;
  /** Whether the service has an API token. */
  tokenSet: boolean;
  /** The server's own body bound (a group's is at most this). */
  maxBodySize: number;
}

/**
 * A route group's middleware inside its scope (docs/server.md, route groups), as a Fastify plugin's routes are
 * inside their encapsulated context: a request under the group's prefix is answered by the group under its rules
 * (its error shape and body bound, then its auth mode and the declared size); any other request passes on at once.
 * The path is the group's: what its middleware passes on with `next()` is still answered in its shape.
 */
export function inGroup(middleware: Middleware, rules: GroupRules, deps: GroupScopeDeps): Middleware {
  const { prefix, errors } = rules;
  const limit = rules.maxBodySize === undefined ? undefined : Math.min(rules.maxBodySize, deps.maxBodySize);
  const refusal = accessCheck(rules, deps);
  return (ctx, next) => {
    if (!ownsPath(prefix, ctx.path)) return next();
    // The group's error shape and body bound hold for the rest of the request: the path is the group's.
    deps.exchangeOf(ctx).errorMapper = errors;
    (ctx.state as GroupState)[GROUP_BODY_LIMIT] = limit;
    const denied = refusal(ctx);
    if (denied) return Promise.reject(denied);
    if (limit !== undefined) refuseDeclaredOverLimit(ctx.get('content-length'), limit);
    return middleware(ctx, next);
  };
}

/** The group's auth mode as a check of one request: null when it may go on, else the 401 to answer. */
function accessCheck(
  rules: GroupRules,
  deps: GroupScopeDeps,
): (ctx: ParameterizedContext) => Unauthorized | null {
  const { auth } = rules;
  if (auth === 'public') return () => null;
  if (auth === 'bearer') return deps.deniedOf;
  const matches = basicAuth(auth.basic);
  const { tokenSet, deniedOf } = deps;
  return (ctx) => {
    if (matches(ctx.get('authorization'))) return null;
    // The service's bearer token opens a Basic group too.
    if (tokenSet && deniedOf(ctx) === null) return null;
    return new Unauthorized(
      tokenSet
        ? 'Authentication required: send Basic credentials (user:pass) or the bearer token'
        : 'Authentication required: send Basic credentials (user:pass)',
      { headers: { 'www-authenticate': BASIC_CHALLENGE } },
    );
  };
}
