import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import {
  defaultResource,
  detectResources,
  envDetector,
  resourceFromAttributes,
} from '@opentelemetry/resources';
import {
  BatchSpanProcessor,
  ConsoleSpanExporter,
  NodeTracerProvider,
  type SpanExporter,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-node';
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions';
import { tracingConfig } from './tracing-config.js';

export interface StartTracingOptions {
  /** `service.name` when `OTEL_SERVICE_NAME` (or `service.name` in `OTEL_RESOURCE_ATTRIBUTES`) sets none. */
  serviceName?: string;
  serviceVersion?: string;
  /** Span processors of the caller's own, beside (or, with `OTEL_TRACES_EXPORTER=none`, instead of) the exporters'. */
  spanProcessors?: SpanProcessor[];
  /**
   * Make it the global provider, with the W3C propagators and the context manager (default true); false: use
   * its `provider.getTracer()` as a server's `tracing` option.
   */
  register?: boolean;
}

/** The running SDK: flush before exit, shut down to stop exporting. */
export interface Tracing {
  readonly provider: NodeTracerProvider;
  forceFlush(): Promise<void>;
  shutdown(): Promise<void>;
}

/**
 * Start the OpenTelemetry SDK as the standard variables configure it and register it globally (its tracer
 * provider, the W3C trace-context and baggage propagators, the AsyncLocalStorage context manager): a Tiffin
 * server made after this traces every request. The OTLP exporters read their own variables (endpoint, headers,
 * timeout, compression); the provider reads the sampler's (`OTEL_TRACES_SAMPLER`, `OTEL_TRACES_SAMPLER_ARG`) and
 * the batch processor's (`OTEL_BSP_*`).
 */
export function startSdk(options: StartTracingOptions = {}): Tracing {
  // The exporters and the resource detector read `process.env` themselves: one source for every variable.
  const config = tracingConfig(process.env);
  const exporters: SpanExporter[] = config.exporters.map((name) => {
    if (name === 'console') return new ConsoleSpanExporter();
    return config.protocol === 'http/json' ? new JsonExporter() : new ProtobufExporter();
  });
  const base = resourceFromAttributes({
    ...(options.serviceName ? { [ATTR_SERVICE_NAME]: options.serviceName } : {}),
    ...(options.serviceVersion ? { [ATTR_SERVICE_VERSION]: options.serviceVersion } : {}),
  });
  // The environment's attributes win over the caller's defaults, as the specification says.
  const resource = defaultResource()
    .merge(base)
    .merge(detectResources({ detectors: [envDetector] }));
  const provider = new NodeTracerProvider({
    resource,
    spanProcessors: [...exporters.map((e) => new BatchSpanProcessor(e)), ...(options.spanProcessors ?? [])],
  });
  if (options.register !== false) provider.register();
  return {
    provider,
    forceFlush: () => provider.forceFlush(),
    shutdown: () => provider.shutdown(),
  };
}
