import type { Service } from '@tiffin/core';

/**
 * Start OpenTelemetry tracing when the standard OTEL_* variables ask for it (docs/observability.md): only then is
 * `@tiffin/otel` (the SDK and the OTLP exporters) loaded, before the server is made, so that the server traces
 * through it. The spans still buffered are flushed as the service shuts down. The package's entry is small: the SDK is
 * imported by `startTracing` alone.
 */
export async function useTracing(service: Service): Promise<void> {
  const { tracingRequested, startTracing } = await import('@tiffin/otel');
  if (!tracingRequested(process.env)) return;
  const tracing = await startTracing({ serviceName: service.name, serviceVersion: service.version });
  service.onShutdown(() => tracing.shutdown());
}
