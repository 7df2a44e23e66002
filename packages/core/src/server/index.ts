export * from './app.js';
export * from './logger.js';
export * from './metrics.js';
export { UNLIMITED_PATHS } from './middleware/concurrency.js';
export * from './options.js';
export * from './serve.js';
