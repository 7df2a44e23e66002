import { Counter, register as defaultRegistry, Gauge, Histogram, type Registry } from 'prom-client';

/** Metrics of gRPC calls, next to the HTTP ones (`tiffin_api_server_*`) in the same registry. */
export interface GrpcMetrics {
  readonly total: Counter<'api_name' | 'service_name' | 'grpc_code'>;
  readonly duration: Histogram<'api_name' | 'service_name' | 'grpc_code'>;
  readonly inProgress: Gauge<'api_name' | 'service_name'>;
}

const byRegistry = new WeakMap<Registry, GrpcMetrics>();

export function grpcMetrics(registry: Registry = defaultRegistry): GrpcMetrics {
  let metrics = byRegistry.get(registry);
  if (!metrics) {
    metrics = {
      total: new Counter({
        name: 'tiffin_grpc_server_request_total',
        help: 'gRPC calls handled, by API and status code',
        labelNames: ['api_name', 'service_name', 'grpc_code'],
        registers: [registry],
      }),
      duration: new Histogram({
        name: 'tiffin_grpc_server_request_duration_seconds',
        help: 'gRPC call duration in seconds',
        labelNames: ['api_name', 'service_name', 'grpc_code'],
        buckets: [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10],
        registers: [registry],
      }),
      inProgress: new Gauge({
        name: 'tiffin_grpc_server_request_in_progress',
        help: 'gRPC calls in progress',
        labelNames: ['api_name', 'service_name'],
        registers: [registry],
      }),
    };
    byRegistry.set(registry, metrics);
  }
  return metrics;
}
