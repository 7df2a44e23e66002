import { type Metric, type OpenMetricsContentType, Registry } from 'prom-client';
import type { ServiceCounter } from '../service/service.js';

/** Metric name prefix (docs/spec/io-descriptors.md §10.6, D6). */
export const METRICS_PREFIX = 'tiffin_api_server_';

/** Default latency buckets in seconds (docs/spec/io-descriptors.md §10.6). */
export const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10];

type Labels = Record<string, string>;

/** One (endpoint, status) series: request count, latency sum and per-bucket (non-cumulative) counts. */
interface RequestSeries {
  /** The endpoint and status it counts (its labels say the same, as strings). */
  readonly endpoint: string;
  readonly status: number;
  labels: Labels;
  count: number;
  sum: number;
  buckets: Float64Array;
  /** The last sampled request's exemplar in each bucket (the last one `+Inf`), made on the first one. */
  exemplars?: Array<Exemplar | undefined>;
}

/** An OpenMetrics exemplar as prom-client's registry renders it: `# {trace_id="…"} value timestamp`. */
interface Exemplar {
  labelSet: Labels;
  value: number;
  timestamp: number;
}

interface MetricValue {
  value: number;
  labels: Labels;
  metricName?: string;
  exemplar?: Exemplar;
}

/** The shape prom-client's registry renders (what its own metric classes return from `get()`). */
interface CollectedMetric {
  name: string;
  help: string;
  type: 'counter' | 'gauge' | 'histogram';
  aggregator: 'sum' | 'max';
  values: MetricValue[];
}

/**
 * The server's Prometheus metrics: request counter, latency histogram, in-progress gauge and last-request
 * timestamp, labelled per API endpoint. The hot path only bumps numbers in maps (prom-client's own classes
 * hash label objects on every call, a large share of a small request); the values are handed to a prom-client
 * `Registry` at scrape time. Users may register their own prom-client metrics in `registry` too.
 */
export class ServerMetrics {
  readonly registry = new Registry();
  /** Request series by endpoint, then status: the hot path finds its series without building a key. */
  private readonly byEndpoint = new Map<string, Map<number, RequestSeries>>();
  private readonly inProgress = new Map<string, InProgress>();
  /** When the last request (not a health check) ended: a performance.now() reading. */
  private lastRequestAt: number | undefined;
  private readonly baseLabels: Labels;
  private readonly shed: (values: readonly string[]) => void;

  constructor(serviceName: string, serviceVersion: string) {
    this.baseLabels = { service_name: serviceName, service_version: serviceVersion };
    const requestLabels = () => [...this.byEndpoint.values()].flatMap((byStatus) => [...byStatus.values()]);
    this.register({
      name: `${METRICS_PREFIX}request_total`,
      help: 'Requests answered, by endpoint and status code',
      type: 'counter',
      aggregator: 'sum',
      values: () => requestLabels().map((s) => ({ value: s.count, labels: s.labels })),
    });
    this.register({
      name: `${METRICS_PREFIX}request_duration_seconds`,
      help: 'Time until the response started, by endpoint and status code',
      type: 'histogram',
      aggregator: 'sum',
      values: () =>
        requestLabels().flatMap((s) => histogramValues(`${METRICS_PREFIX}request_duration_seconds`, s)),
    });
    this.register({
      name: `${METRICS_PREFIX}request_in_progress`,
      help: 'Requests being handled now, by endpoint',
      type: 'gauge',
      aggregator: 'sum',
      values: () => [...this.inProgress.values()].map((g) => ({ value: g.value, labels: g.labels })),
    });
    this.register({
      name: `${METRICS_PREFIX}last_request_timestamp_seconds`,
      help: 'Unix time of the last request to a non-health endpoint',
      type: 'gauge',
      aggregator: 'max',
      values: () =>
        this.lastRequestAt === undefined
          ? []
          : [{ value: wallClockSeconds(this.lastRequestAt), labels: this.baseLabels }],
    });
    this.shed = this.labelledCounter(
      'shed_total',
      'Calls refused for load (429, 503) or timed out (504), by API and error code',
      ['api_name', 'code'],
    );
  }

  /**
   * A counter of events (work shed, cut off or cancelled) with one label, made once; the returned function
   * counts one event under `value` (a small closed set of values: bounded series).
   */
  counter(name: string, help: string, label: string): (value: string) => void {
    const count = this.labelledCounter(name, help, [label]);
    return (value) => count([value]);
  }

  /**
   * A counter with several labels, made once; the returned function counts one event under `values` (one per
   * label, in order; each from a small closed set, so the series stay bounded).
   */
  labelledCounter(
    name: string,
    help: string,
    labels: readonly string[],
  ): (values: readonly string[]) => void {
    const counts = new Map<string, { labels: Labels; value: number }>();
    this.register({
      name: `${METRICS_PREFIX}${name}`,
      help,
      type: 'counter',
      aggregator: 'sum',
      values: () => [...counts.values()].map((c) => ({ value: c.value, labels: c.labels })),
    });
    return (values) => {
      // A NUL cannot occur in a label value that matters here; it keeps the key unambiguous.
      const key = values.join('\0');
      let series = counts.get(key);
      if (!series) {
        const own: Labels = {};
        labels.forEach((label, i) => {
          own[label] = values[i] ?? '';
        });
        series = { labels: { ...own, ...this.baseLabels }, value: 0 };
        counts.set(key, series);
      }
      series.value++;
    };
  }

  /** Serves a counter the service keeps (`Service.counter`), read at scrape time. */
  serviceCounter(counter: ServiceCounter): void {
    this.register({
      name: `${METRICS_PREFIX}${counter.name}`,
      help: counter.help,
      type: counter.kind ?? 'counter',
      aggregator: 'sum',
      values: () =>
        [...counter.counts.values()].map((series) => ({
          value: series.value,
          labels: {
            ...Object.fromEntries(counter.labels.map((label, i) => [label, series.values[i] ?? ''])),
            ...this.baseLabels,
          },
        })),
    });
  }

  /**
   * Counts an error answer that sheds or times out work (a 429, 503 or 504: the concurrency gate, the stream
   * cap, a full queue, the deadline), by API (or endpoint, outside the APIs) and the answer's `code` from the
   * one error table; other answers are not counted here (`request_total` has them by status).
   */
  errorAnswered(apiName: string, status: number, code: string): void {
    if (status === 429 || status === 503 || status === 504) this.shed([apiName, code]);
  }

  /**
   * The registry's metrics as text: the Prometheus text format, or OpenMetrics (`openMetrics`, asked for with
   * `Accept: application/openmetrics-text`), whose histogram buckets carry exemplars naming the trace of a
   * sampled request. The OpenMetrics text is rendered by a registry of its own made for the scrape, so the
   * renaming of counters it does (`_total`) never reaches the Prometheus one.
   */
  async exposition(openMetrics: boolean): Promise<{ text: string; contentType: string }> {
    if (!openMetrics) return { text: await this.registry.metrics(), contentType: this.registry.contentType };
    const open = new Registry<OpenMetricsContentType>();
    open.setContentType(Registry.OPENMETRICS_CONTENT_TYPE);
    for (const metric of this.registry.getMetricsAsArray()) {
      const view = {
        name: metric.name,
        help: metric.help,
        type: metric.type,
        // The rendered name is the view's, which the registry strips of `_total` for counters.
        get: async () => ({ ...(await metricValues(metric as unknown as Metric)), name: view.name }),
      };
      open.registerMetric(view as unknown as Metric);
    }
    return { text: await open.metrics(), contentType: open.contentType };
  }

  private register(def: Omit<CollectedMetric, 'values'> & { values: () => MetricValue[] }): void {
    const { values, ...meta } = def;
    const metric = { ...meta, get: async (): Promise<CollectedMetric> => ({ ...meta, values: values() }) };
    // prom-client renders any object with name/help/type/get(); its typings only name its own classes.
    this.registry.registerMetric(metric as unknown as Metric);
  }

  /**
   * Call when a request starts: counts it in progress under `endpoint`. Hand what it returns to `finish` when
   * the request ends (a pair of calls, not a closure per request).
   */
  start(endpoint: string): InProgress {
    let gauge = this.inProgress.get(endpoint);
    if (!gauge) {
      gauge = { labels: { endpoint, ...this.baseLabels }, value: 0, last: undefined };
      this.inProgress.set(endpoint, gauge);
    }
    gauge.value++;
    return gauge;
  }

  /**
   * Record the end of a request `start` counted: its status code and latency since `begin` (a
   * performance.now() reading: a plain double, no BigInt per request), under the endpoint it was routed to in
   * the end (a mounted route's pattern); a health check does not move the last-request time.
   */
  finish(
    started: InProgress,
    status: number,
    routedTo: string,
    begin: number,
    isHealth: boolean,
    traceId?: string,
  ): void {
    started.value--;
    const now = performance.now();
    const seconds = (now - begin) / 1000;
    let series = started.last;
    if (series === undefined || series.status !== status || series.endpoint !== routedTo) {
      series = this.series(routedTo, status);
      started.last = series;
    }
    series.count++;
    series.sum += seconds;
    let bucket = 0;
    while (bucket < DURATION_BUCKETS.length && seconds > DURATION_BUCKETS[bucket]!) bucket++;
    if (bucket < DURATION_BUCKETS.length) series.buckets[bucket]!++;
    // A sampled request's trace is its bucket's exemplar (OpenMetrics only: the Prometheus text has none).
    if (traceId !== undefined) {
      series.exemplars ??= new Array(DURATION_BUCKETS.length + 1);
      series.exemplars[bucket] = {
        labelSet: { trace_id: traceId },
        value: seconds,
        timestamp: Date.now() / 1000,
      };
    }
    // Kept as the reading in hand (no clock read per request); made wall-clock time when scraped.
    if (!isHealth) this.lastRequestAt = now;
  }

  /** The series of requests to `endpoint` that ended with `status` (made on the first one). */
  private series(endpoint: string, status: number): RequestSeries {
    let byStatus = this.byEndpoint.get(endpoint);
    if (!byStatus) {
      byStatus = new Map();
      this.byEndpoint.set(endpoint, byStatus);
    }
    let series = byStatus.get(status);
    if (!series) {
      series = {
        endpoint,
        status,
        labels: { endpoint, ...this.baseLabels, http_response_code: String(status) },
        count: 0,
        sum: 0,
        buckets: new Float64Array(DURATION_BUCKETS.length),
      };
      byStatus.set(status, series);
    }
    return series;
  }
}

/** A request counted in progress (`ServerMetrics.start`): its endpoint's gauge. */
export interface InProgress {
  readonly labels: Labels;
  value: number;
  /** The series the endpoint's last request ended in (most end as the one before: no lookup then). */
  last?: RequestSeries;
}

function histogramValues(name: string, s: RequestSeries): MetricValue[] {
  const out: MetricValue[] = [];
  let cumulative = 0;
  for (let i = 0; i < DURATION_BUCKETS.length; i++) {
    cumulative += s.buckets[i]!;
    const value: MetricValue = {
      value: cumulative,
      labels: { le: String(DURATION_BUCKETS[i]), ...s.labels },
      metricName: `${name}_bucket`,
    };
    const exemplar = s.exemplars?.[i];
    if (exemplar) value.exemplar = exemplar;
    out.push(value);
  }
  const inf: MetricValue = {
    value: s.count,
    labels: { le: '+Inf', ...s.labels },
    metricName: `${name}_bucket`,
  };
  const exemplar = s.exemplars?.[DURATION_BUCKETS.length];
  if (exemplar) inf.exemplar = exemplar;
  out.push(inf);
  out.push({ value: s.sum, labels: s.labels, metricName: `${name}_sum` });
  out.push({ value: s.count, labels: s.labels, metricName: `${name}_count` });
  return out;
}

/** A metric's values as the registry renders them (prom-client's histograms and summaries have their own getter). */
function metricValues(metric: Metric): Promise<CollectedMetric> {
  const own = metric as unknown as {
    getForPromString?: () => Promise<CollectedMetric>;
    get: () => Promise<CollectedMetric>;
  };
  return own.getForPromString ? own.getForPromString() : own.get();
}

/**
 * The wall-clock time, in seconds, of a performance.now() reading `at`: now less the time since, as the
 * monotonic clock measured it (so a reading long ago is off by the monotonic clock's drift over the interval).
 */
function wallClockSeconds(at: number): number {
  return (Date.now() - (performance.now() - at)) / 1000;
}
