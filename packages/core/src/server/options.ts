import type { Tracer } from '@opentelemetry/api';
import type { ResponseCacheStore } from '../cache/response-cache.js';
import { type LimitOptions, type Limits, resolveLimits } from '../limits/limits.js';
import type { Logger } from '../logging/logger.js';
import { DEFAULT_MAX_BUFFERED_BYTES } from '../runtime/body-budget.js';
import type { WebhookOptions } from '../runtime/task-webhook.js';
import { resolveApiToken } from './auth.js';

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
  /**
   * Bytes of request bodies held across every request in flight, gRPC messages of a server sharing this
   * server's runtime included (default 256 MiB): a body that would take the total past it is refused with 503
   * `BODY_BUDGET_FULL` and `Retry-After`, counted as its bytes arrive. Keep it at least `maxBodySize`.
   */
  maxBufferedBytes?: number;
  /** Most requests handled at once, health paths excluded (default 128); more → 503 + Retry-After. */
  maxConcurrency?: number;
  /**
   * Seconds a request may take before its response starts (default 60); an API's own `timeout` overrides it,
   * and a mount's for the requests that mount runs (`Service.mount`).
   */
  timeout?: number;
  /** Seconds sent in `Retry-After` with a 503 overload answer (default 1). */
  retryAfter?: number;
  cors?: CorsOptions;
  /** Prometheus metrics at /metrics (default true). */
  metrics?: boolean;
  /** Where structured logs go; `false` silences them. Default: JSON lines on stdout. */
  logger?: Logger | false;
  /**
   * Where the answers of APIs with `cache` are kept (docs/cache.md): default this process's memory, 64 MiB,
   * least recently used first out; a shared store (`RedisResponseCache`) for replicas.
   */
  cache?: ResponseCacheStore;
  /**
   * `/readyz` fails while more tasks than this wait to start in the service's task store (`--ready-max-queue`;
   * default: never), so a load balancer sends new work elsewhere (docs/deploy.md).
   */
  readyMaxQueue?: number;
  /**
   * OpenTelemetry traces of every request (docs/observability.md): absent or `true`, through the global tracer
   * provider when an SDK is registered before the server is made (none: no span, no cost); a `Tracer`, through
   * it; `false`, none.
   */
  tracing?: boolean | Tracer;
  /** `Server-Timing` on API answers: the queue, decode, run and encode milliseconds (default true). */
  serverTiming?: boolean;
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
  /**
   * Task webhooks (docs/tasks.md): the hosts a submit's `Tiffin-Webhook-Url` may name and the secret that
   * signs each delivery. Default: none allowed, so every webhook URL is a 400.
   */
  webhooks?: WebhookOptions;
  /** Bounds on input (nesting depth, multipart parts and names); see `DEFAULT_LIMITS` and docs/security.md. */
  limits?: LimitOptions;
  /** Seconds a client has to send its request headers (default 10); then the connection is closed (408). */
  headersTimeout?: number;
  /**
   * Seconds a request body may stall between two chunks (default 10); then 408 `REQUEST_TIMEOUT` and the
   * connection closes. API calls take their concurrency permit only once the body is in.
   */
  bodyTimeout?: number;
  /**
   * Seconds a client may go without reading an answer it was sent (at least `minSendRate` bytes a second)
   * before the server closes the connection (default 30): a client that asks and never reads cannot hold
   * a permit, a stream slot or the answer's memory longer.
   */
  sendTimeout?: number;
  /** Bytes a second a client must read of a pending answer, averaged over `sendTimeout` (default 1024). */
  minSendRate?: number;
  /**
   * Event streams (`text/event-stream` answers) open at once (default 64); one more → 503. They do not count
   * against `maxConcurrency`: the API permit is handed back when the stream starts.
   */
  maxStreams?: number;
  /** Seconds an event stream may go without an event before the server ends it (default 300). */
  streamIdleTimeout?: number;
  /** Seconds an event stream may stay open in all (default 3600); the client reconnects to go on. */
  streamLifetime?: number;
}

/** Options with every default filled in. */
export interface ResolvedServerOptions {
  host: string;
  port: number;
  maxBodySize: number;
  maxBufferedBytes: number;
  maxConcurrency: number;
  timeout: number;
  retryAfter: number;
  cors: CorsOptions;
  metrics: boolean;
  logger: Logger | false;
  cache?: ResponseCacheStore;
  readyMaxQueue?: number;
  tracing?: boolean | Tracer;
  serverTiming: boolean;
  drainTimeout: number;
  apiPage: boolean;
  inferenceProtocol: boolean;
  limits: Readonly<Limits>;
  headersTimeout: number;
  bodyTimeout: number;
  sendTimeout: number;
  minSendRate: number;
  maxStreams: number;
  streamIdleTimeout: number;
  streamLifetime: number;
  /** The token in force (explicit or from the environment), or undefined for no auth. */
  apiToken: string | undefined;
  metricsAuth: boolean;
  webhooks?: WebhookOptions;
}

export const DEFAULT_SERVER_OPTIONS: Omit<ResolvedServerOptions, 'logger' | 'limits' | 'apiToken'> = {
  host: '127.0.0.1',
  port: 3000,
  maxBodySize: 32 * 1024 * 1024,
  maxBufferedBytes: DEFAULT_MAX_BUFFERED_BYTES,
  maxConcurrency: 128,
  timeout: 60,
  retryAfter: 1,
  cors: { enabled: false },
  metrics: true,
  serverTiming: true,
  drainTimeout: 30,
  apiPage: true,
  inferenceProtocol: true,
  metricsAuth: false,
  headersTimeout: 10,
  bodyTimeout: 10,
  sendTimeout: 30,
  minSendRate: 1024,
  maxStreams: 64,
  streamIdleTimeout: 300,
  streamLifetime: 3600,
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
