export { createApp, type TiffinApp } from './app.js';
export { API_TOKEN_ENV, type AuthCheck, type AuthOptions, bearerAuth, resolveApiToken } from './auth.js';
export * from './lifecycle.js';
export {
  type AccessLogEntry,
  JsonLineLogger,
  type LogFields,
  type Logger,
  type LogLevel,
  MemoryLogger,
  silentLogger,
} from './logger.js';
export { ServerMetrics } from './metrics.js';
export type { CorsOptions, ResolvedServerOptions, ServerOptions } from './options.js';
export * from './serve.js';
