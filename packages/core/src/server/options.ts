import { type LimitOptions, type Limits, resolveLimits } from '../limits/limits.js';
import { resolveApiToken } from './auth.js';
import type { Logger } from './logger.js';

/** CORS settings (docs/spec/io-descriptors.md §10.6). Disabled unless `enabled` is true. */
export interface CorsOptions {
  enabled: boolean;
  /** Allowed origins; `'*'` allows all. A single string is accepted. */
  access_control_allow_origins?: string | string[];
  access_control_allow_origin_regex?: string;
  access_control_allow_credentials?: boolean;
  /** Default `['GET']`. */
  access_control_allow_methods?: string | string[];
  access_control_allow_headers?: string | string[];
  /** Seconds; default 600. */
  access_control_max_age?: number;
  access_control_expose_headers?: string | string[];
}

/** Everything the HTTP server can be told; every field has a safe default. */
export interface ServerOptions {
  /** Interface to bind (default 127.0.0.1: nothing is exposed unless asked). */
  host?: string;
  /** Port (default 3000; 0 picks a free one). */
  port?: number;
  /** Largest request body in bytes (default 32 MiB); more → 413. */
  maxBodySize?: number;
  /** Most requests handled at once, health paths excluded (default 128); more → 503 + Retry-After. */
  maxConcurrency?: number;
  /** Seconds a request may take before its response starts (default 60); per-API `timeout` overrides. */
  timeout?: number;
  /** Seconds sent in `Retry-After` with a 503 overload answer (default 1). */
  retryAfter?: number;
  cors?: CorsOptions;
  /** Prometheus metrics at /metrics (default true). */
  metrics?: boolean;
  /** Where structured logs go; `false` silences them. Default: JSON lines on stdout. */
  logger?: Logger | false;
  /** Seconds to wait for in-flight requests on shutdown before closing connections (default 30). */
  drainTimeout?: number;
  /** Serve the interactive API page at `/` (default true). */
  apiPage?: boolean;
  /** The Open Inference Protocol (KServe v2) routes under `/v2` (default true). */
  inferenceProtocol?: boolean;
  /**
   * Bearer token every API call, `/` and `/docs.json` must carry (`Authorization: Bearer <token>`); missing or
   * wrong → 401. Default: `$TIFFIN_API_TOKEN`; unset or empty → no auth. Probes stay open.
   */
  apiToken?: string;
  /** With `apiToken`: require it for `/metrics` too (default false). */
  metricsAuth?: boolean;
  /** Bounds on input (nesting depth, multipart parts and names); see `DEFAULT_LIMITS` and docs/security.md. */
  limits?: LimitOptions;
}

/** Options with every default filled in. */
export interface ResolvedServerOptions {
  host: string;
  port: number;
  maxBodySize: number;
  maxConcurrency: number;
  timeout: number;
  retryAfter: number;
  cors: CorsOptions;
  metrics: boolean;
  logger: Logger | false;
  drainTimeout: number;
  apiPage: boolean;
  inferenceProtocol: boolean;
  limits: Readonly<Limits>;
  /** The token in force (explicit or from the environment), or undefined for no auth. */
  apiToken: string | undefined;
  metricsAuth: boolean;
}

export const DEFAULT_SERVER_OPTIONS: Omit<ResolvedServerOptions, 'logger' | 'limits' | 'apiToken'> = {
  host: '127.0.0.1',
  port: 3000,
  maxBodySize: 32 * 1024 * 1024,
  maxConcurrency: 128,
  timeout: 60,
  retryAfter: 1,
  cors: { enabled: false },
  metrics: true,
  drainTimeout: 30,
  apiPage: true,
  inferenceProtocol: true,
  metricsAuth: false,
};

export function resolveServerOptions(options: ServerOptions, defaultLogger: Logger): ResolvedServerOptions {
  const resolved: ResolvedServerOptions = {
    ...DEFAULT_SERVER_OPTIONS,
    logger: defaultLogger,
    limits: resolveLimits(),
    apiToken: undefined,
  };
  for (const [key, value] of Object.entries(options)) {
    if (value !== undefined) (resolved as unknown as Record<string, unknown>)[key] = value;
  }
  resolved.limits = resolveLimits(options.limits);
  resolved.apiToken = resolveApiToken(options.apiToken);
  return resolved;
}
