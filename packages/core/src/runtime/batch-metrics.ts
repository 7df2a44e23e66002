import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/** Per-API batching metrics, in the server's registry beside `tiffin_api_server_*` request metrics. */
export class BatchMetrics {
  private readonly size: Histogram<'api_name' | 'service_name'>;
  private readonly shed: Counter<'api_name' | 'service_name'>;
  private readonly depths = new Map<string, () => number>();

  constructor(
    registry: Registry,
    private readonly serviceName: string,
  ) {
    this.size = new Histogram({
      name: 'tiffin_api_server_batch_size',
      help: 'Rows per batch run by a batchable API',
      labelNames: ['api_name', 'service_name'],
      buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024],
      registers: [registry],
    });
    this.shed = new Counter({
      name: 'tiffin_api_server_batch_shed_total',
      help: 'Requests refused with 503 because the batch queue could not meet max_latency_ms',
      labelNames: ['api_name', 'service_name'],
      registers: [registry],
    });
    const depths = this.depths;
    new Gauge({
      name: 'tiffin_api_server_batch_queue_depth',
      help: 'Rows waiting for a batch, by API',
      labelNames: ['api_name', 'service_name'],
      registers: [registry],
      collect() {
        for (const [api, depth] of depths) this.set({ api_name: api, service_name: serviceName }, depth());
      },
    });
  }

  /** Report `api`'s queue depth at scrape time. */
  track(api: string, depth: () => number): void {
    this.depths.set(api, depth);
  }

  batchRun(api: string, rows: number): void {
    this.size.observe({ api_name: api, service_name: this.serviceName }, rows);
  }

  shedOne(api: string): void {
    this.shed.inc({ api_name: api, service_name: this.serviceName });
  }
}
