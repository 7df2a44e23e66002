export { UNLIMITED_PATHS } from '../runtime/concurrency-gate.js';
export * from './app.js';
export { API_TOKEN_ENV, type AuthCheck, type AuthOptions, bearerAuth, resolveApiToken } from './auth.js';
export * from './lifecycle.js';
export * from './logger.js';
export * from './metrics.js';
export * from './options.js';
export * from './serve.js';
