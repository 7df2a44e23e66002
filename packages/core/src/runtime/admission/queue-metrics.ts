import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/** What the metrics read from a queue at scrape time. */
export interface QueueGauges {
  readonly depth: number;
  readonly oldestSeconds: number;
}

type Labels = 'api_name' | 'service_name';

/**
 * The API queues' metrics (docs/observability.md), beside the `tiffin_api_server_*` request metrics: how long
 * calls waited, how many wait now and for how long the oldest has, and the calls refused before waiting.
 */
export class QueueMetrics {
  private readonly wait: Histogram<Labels>;
  private readonly refusals: Counter<Labels | 'reason'>;
  private readonly queues = new Map<string, QueueGauges>();

  constructor(
    registry: Registry,
    private readonly serviceName: string,
  ) {
    this.wait = new Histogram({
      name: 'tiffin_api_server_queue_wait_seconds',
      help: "Seconds a call waited in its API's queue before it ran",
      labelNames: ['api_name', 'service_name'],
      buckets: [0.001, 0.005, 0.025, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers: [registry],
    });
    this.refusals = new Counter({
      name: 'tiffin_api_server_queue_refused_total',
      help: "Calls an API's queue refused before they waited: full, the client's share taken, or the deadline out of reach",
      labelNames: ['api_name', 'service_name', 'reason'],
      registers: [registry],
    });
    const queues = this.queues;
    new Gauge({
      name: 'tiffin_api_server_queue_depth',
      help: "Calls waiting in an API's queue",
      labelNames: ['api_name', 'service_name'],
      registers: [registry],
      collect() {
        for (const [api, q] of queues) this.set({ api_name: api, service_name: serviceName }, q.depth);
      },
    });
    new Gauge({
      name: 'tiffin_api_server_queue_oldest_seconds',
      help: "Seconds the oldest call waiting in an API's queue has waited (0: none waits)",
      labelNames: ['api_name', 'service_name'],
      registers: [registry],
      collect() {
        for (const [api, q] of queues)
          this.set({ api_name: api, service_name: serviceName }, q.oldestSeconds);
      },
    });
  }

  /** Report `queue`'s depth and oldest age at scrape time. */
  track(api: string, queue: QueueGauges): void {
    this.queues.set(api, queue);
  }

  waited(api: string, seconds: number): void {
    this.wait.observe({ api_name: api, service_name: this.serviceName }, seconds);
  }

  refused(api: string, reason: 'full' | 'client' | 'deadline'): void {
    this.refusals.inc({ api_name: api, service_name: this.serviceName, reason });
  }
}
