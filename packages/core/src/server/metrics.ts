import { Counter, Gauge, Histogram, Registry } from 'prom-client';

/** Metric name prefix (spec 10.6, D6). */
export const METRICS_PREFIX = 'tiffin_api_server_';

/** Default latency buckets in seconds (spec 10.6). */
export const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10];

type RequestLabels = 'endpoint' | 'service_name' | 'service_version' | 'http_response_code';
type ProgressLabels = 'endpoint' | 'service_name' | 'service_version';

/** The server's Prometheus metrics, in a registry of its own (several apps can live in one process). */
export class ServerMetrics {
  readonly registry = new Registry();
  private readonly total: Counter<RequestLabels>;
  private readonly duration: Histogram<RequestLabels>;
  private readonly inProgress: Gauge<ProgressLabels>;
  private readonly lastRequest: Gauge<'service_name' | 'service_version'>;

  constructor(
    private readonly serviceName: string,
    private readonly serviceVersion: string,
  ) {
    const registers = [this.registry];
    this.total = new Counter({
      name: `${METRICS_PREFIX}request_total`,
      help: 'Requests answered, by endpoint and status code',
      labelNames: ['endpoint', 'service_name', 'service_version', 'http_response_code'],
      registers,
    });
    this.duration = new Histogram({
      name: `${METRICS_PREFIX}request_duration_seconds`,
      help: 'Time until the response started, by endpoint and status code',
      labelNames: ['endpoint', 'service_name', 'service_version', 'http_response_code'],
      buckets: DURATION_BUCKETS,
      registers,
    });
    this.inProgress = new Gauge({
      name: `${METRICS_PREFIX}request_in_progress`,
      help: 'Requests being handled now, by endpoint',
      labelNames: ['endpoint', 'service_name', 'service_version'],
      registers,
    });
    this.lastRequest = new Gauge({
      name: `${METRICS_PREFIX}last_request_timestamp_seconds`,
      help: 'Unix time of the last request to a non-health endpoint',
      labelNames: ['service_name', 'service_version'],
      registers,
    });
  }

  /** Call when a request starts; the returned function records its end. */
  start(endpoint: string, isHealth: boolean): (status: number) => void {
    const labels = { endpoint, service_name: this.serviceName, service_version: this.serviceVersion };
    this.inProgress.inc(labels);
    const begin = process.hrtime.bigint();
    return (status) => {
      this.inProgress.dec(labels);
      const seconds = Number(process.hrtime.bigint() - begin) / 1e9;
      const withCode = { ...labels, http_response_code: String(status) };
      this.total.inc(withCode);
      this.duration.observe(withCode, seconds);
      if (!isHealth) {
        this.lastRequest.set(
          { service_name: this.serviceName, service_version: this.serviceVersion },
          Date.now() / 1000,
        );
      }
    };
  }
}
