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

/** The metrics one call updates: bound to its API, so a call does no label hashing (prom-client's `labels()`). */
export interface CallMetrics {
  start(): void;
  finish(code: number, seconds: number): void;
}

type CounterChild = ReturnType<GrpcMetrics['total']['labels']>;
type HistogramChild = ReturnType<GrpcMetrics['duration']['labels']>;
type GaugeChild = ReturnType<GrpcMetrics['inProgress']['labels']>;

const boundByMetrics = new WeakMap<GrpcMetrics, Map<string, CallMetrics>>();

/** The call metrics of `apiName` in `serviceName` (made once per API and kept). */
export function callMetrics(metrics: GrpcMetrics, serviceName: string, apiName: string): CallMetrics {
  let byApi = boundByMetrics.get(metrics);
  if (!byApi) {
    byApi = new Map();
    boundByMetrics.set(metrics, byApi);
  }
  const key = `${serviceName}\u0000${apiName}`;
  let bound = byApi.get(key);
  if (!bound) {
    const inProgress: GaugeChild = metrics.inProgress.labels({
      api_name: apiName,
      service_name: serviceName,
    });
    const byCode = new Map<number, { total: CounterChild; duration: HistogramChild }>();
    bound = {
      start: () => inProgress.inc(),
      finish: (code, seconds) => {
        inProgress.dec();
        let children = byCode.get(code);
        if (!children) {
          const labels = { api_name: apiName, service_name: serviceName, grpc_code: String(code) };
          children = { total: metrics.total.labels(labels), duration: metrics.duration.labels(labels) };
          byCode.set(code, children);
        }
        children.total.inc();
        children.duration.observe(seconds);
      },
    };
    byApi.set(key, bound);
  }
  return bound;
}
