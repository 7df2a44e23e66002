export type { StartTracingOptions, Tracing } from './sdk.js';
export { startTracing } from './start-tracing.js';
export { type Env, type TracingConfig, tracingConfig, tracingRequested } from './tracing-config.js';
