/**
 * `BENCH_TRACING` for the echo servers: `sampled` or `unsampled` registers the OpenTelemetry SDK (through
 * `@tiffin/otel`, as `tiffin serve` does) with every span sampled or none, its spans handed to a batch processor
 * whose exporter drops them: the cost of tracing inside the server, not of shipping spans over the network.
 */
import { BatchSpanProcessor, type SpanExporter } from '@opentelemetry/sdk-trace-node';
import { startTracing } from '@tiffin/otel';

const dropped: SpanExporter = {
  export: (_spans, done) => done({ code: 0 }),
  shutdown: async () => {},
};

export async function startBenchTracing(mode: string): Promise<void> {
  if (mode !== 'sampled' && mode !== 'unsampled')
    throw new Error(`BENCH_TRACING=${mode}: sampled or unsampled`);
  process.env.OTEL_TRACES_EXPORTER = 'none';
  process.env.OTEL_TRACES_SAMPLER = mode === 'sampled' ? 'always_on' : 'always_off';
  await startTracing({ serviceName: 'bench_echo', spanProcessors: [new BatchSpanProcessor(dropped)] });
}
