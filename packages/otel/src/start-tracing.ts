import type { StartTracingOptions, Tracing } from './sdk.js';

/**
 * Start the OpenTelemetry SDK as the standard variables configure it (`startSdk`, docs/observability.md). The
 * SDK and the exporters are imported only here, so a process that reads `tracingRequested` and does not trace
 * never loads them.
 */
export async function startTracing(options: StartTracingOptions = {}): Promise<Tracing> {
  const { startSdk } = await import('./sdk.js');
  return startSdk(options);
}
