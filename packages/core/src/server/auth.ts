import { createHash, timingSafeEqual } from 'node:crypto';
import { ConfigError, Unauthorized } from '../errors/index.js';

/**
 * Optional bearer-token auth, transport-neutral: a pure check the HTTP pipeline and the gRPC server each call
 * at one point (the HTTP request pipeline's `auth` stage, the gRPC server's interceptor). With a token set,
 * every path needs `Authorization: Bearer <token>` except the probes and, unless asked, the metrics.
 */

/** The environment variable `serve()`, `serveGrpc()`, `tiffin serve` and built packages read the token from. */
export const API_TOKEN_ENV = 'TIFFIN_API_TOKEN';

/** Paths that stay open with a token set: orchestrator probes, and /metrics unless `metricsAuth` is on. */
const PROBE_PATHS: ReadonlySet<string> = new Set([
  '/livez',
  '/healthz',
  '/readyz',
  '/v2/health/live',
  '/v2/health/ready',
]);

export interface AuthOptions {
  /** The token; empty or absent turns auth off. */
  token: string;
  /** Require the token for /metrics too (default false: scrapers usually cannot send one). */
  metricsAuth?: boolean;
}

/** Answers a request's `Authorization` value for a path: null when allowed, else the 401 to send. */
export type AuthCheck = (path: string, authorization: string | null | undefined) => Unauthorized | null;

/** The token to use: the explicit one (an empty string turns auth off), else `$TIFFIN_API_TOKEN`. */
export function resolveApiToken(explicit: string | undefined): string | undefined {
  const token = explicit ?? process.env[API_TOKEN_ENV];
  return token ? token : undefined;
}

/** SHA-256 first, so the comparison is constant-time whatever the presented token's length. */
function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

/** `Bearer <token>` (scheme case-insensitive, RFC 6750 §2.1); anything else → null. */
function bearerCredentials(authorization: string): string | null {
  const space = authorization.indexOf(' ');
  if (space < 0 || authorization.slice(0, space).toLowerCase() !== 'bearer') return null;
  const credentials = authorization.slice(space + 1).trim();
  return credentials.length > 0 ? credentials : null;
}

/** A 401 carrying the `WWW-Authenticate` challenge (RFC 6750 §3). */
function unauthorized(message: string, invalidToken: boolean): Unauthorized {
  const challenge = invalidToken ? 'Bearer realm="tiffin", error="invalid_token"' : 'Bearer realm="tiffin"';
  return new Unauthorized(message, { headers: { 'www-authenticate': challenge } });
}

/** The check for `options.token`. */
export function bearerAuth(options: AuthOptions): AuthCheck {
  const { token } = options;
  if (!token || token !== token.trim() || /[\s\0]/.test(token)) {
    throw new ConfigError('The API token must be a non-empty string without spaces');
  }
  const expected = digest(token);
  const metricsAuth = options.metricsAuth ?? false;
  return (path, authorization) => {
    if (PROBE_PATHS.has(path) || (path === '/metrics' && !metricsAuth)) return null;
    if (!authorization) {
      return unauthorized('Authentication required: send the header `Authorization: Bearer <token>`', false);
    }
    const presented = bearerCredentials(authorization);
    if (presented !== null && timingSafeEqual(digest(presented), expected)) return null;
    return unauthorized('The bearer token is missing or wrong', true);
  };
}
