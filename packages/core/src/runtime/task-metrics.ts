import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { TiffinError } from '../errors/index.js';
import { TaskStoreUnavailable } from '../tasks/task-errors.js';
import type { TaskStore, TaskStoreStats } from '../tasks/task-store.js';

/** Task run time buckets in seconds: tasks are the long calls, from tens of milliseconds to an hour. */
export const TASK_DURATION_BUCKETS = [0.01, 0.05, 0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600];

type ApiLabels = 'api_name' | 'service_name';

/**
 * Per-API task metrics, in the server's registry beside the request and batch metrics: submitted, queued and
 * running (read from the store at scrape time, so a shared store reports every replica's tasks), run time by
 * outcome, runs that were retries, failures by error code, and failed calls to the store by operation.
 */
export class TaskMetrics {
  /** The service's store with every call's failure counted: what the task routes and runner call. */
  readonly store: TaskStore;
  private readonly submittedTotal: Counter<ApiLabels>;
  private readonly duration: Histogram<ApiLabels | 'status'>;
  private readonly retriedTotal: Counter<ApiLabels>;
  private readonly failedTotal: Counter<ApiLabels | 'code'>;
  private readonly storeErrors: Counter<'operation' | 'service_name'>;
  /** The store's own `TASK_INTERRUPTED` counts already added to `failedTotal`, by API. */
  private readonly interruptedSeen = new Map<string, number>();

  constructor(
    registry: Registry,
    private readonly serviceName: string,
    storeOf: () => TaskStore,
  ) {
    this.store = countingFailures(storeOf, (operation) => this.storeFailed(operation));
    const labelNames = ['api_name', 'service_name'] as const;
    this.submittedTotal = new Counter({
      name: 'tiffin_api_server_tasks_submitted_total',
      help: 'Tasks accepted (202) by this process, by API',
      labelNames,
      registers: [registry],
    });
    this.duration = new Histogram({
      name: 'tiffin_api_server_task_duration_seconds',
      help: 'Run time of the tasks this process ran, from claim to end, by API and final status',
      labelNames: [...labelNames, 'status'],
      buckets: TASK_DURATION_BUCKETS,
      registers: [registry],
    });
    this.retriedTotal = new Counter({
      name: 'tiffin_api_server_tasks_retried_total',
      help: 'Runs of a task started again after its process stopped while it ran (attempt 2 and up), by API',
      labelNames,
      registers: [registry],
    });
    this.failedTotal = new Counter({
      name: 'tiffin_api_server_tasks_failed_total',
      help: 'Tasks ended failed, by API and error code (TASK_INTERRUPTED: out of attempts)',
      labelNames: [...labelNames, 'code'],
      registers: [registry],
    });
    this.storeErrors = new Counter({
      name: 'tiffin_api_server_task_store_errors_total',
      help: 'Calls to the task store that failed (unreachable, a disk error), by operation',
      labelNames: ['operation', 'service_name'],
      registers: [registry],
    });
    const metrics = this;
    let last: Promise<TaskStoreStats | undefined> | undefined;
    // Both gauges read one `stats()` per scrape (prom-client collects them one after the other).
    const stats = (): Promise<TaskStoreStats | undefined> => {
      last ??= metrics.store
        .stats?.()
        .catch(() => undefined)
        .finally(() => {
          last = undefined;
        });
      return last ?? Promise.resolve(undefined);
    };
    const gauge = (name: string, help: string, pick: 'queued' | 'running') =>
      new Gauge({
        name,
        help,
        labelNames,
        registers: [registry],
        async collect() {
          const now = await stats();
          this.reset();
          if (!now) return;
          for (const [api, counts] of Object.entries(now.unfinished))
            this.set({ api_name: api, service_name: serviceName }, counts[pick]);
          if (pick === 'queued') metrics.addInterrupted(now.interrupted);
        },
      });
    gauge(
      'tiffin_api_server_tasks_queued',
      'Tasks waiting to start in the task store, by API (a shared store counts every replica’s)',
      'queued',
    );
    gauge(
      'tiffin_api_server_tasks_running',
      'Tasks running now, by API (a shared store counts every replica’s)',
      'running',
    );
    new Gauge({
      name: 'tiffin_api_server_tasks_oldest_queued_seconds',
      help: 'Age of the oldest task waiting to start in the task store (a shared store: every replica’s), 0 with none',
      labelNames: ['service_name'],
      registers: [registry],
      async collect() {
        const oldest = await metrics.store.oldestQueuedAt?.().catch(() => undefined);
        this.reset();
        if (oldest === undefined) return;
        const age = oldest === null ? 0 : Math.max(0, (Date.now() - oldest) / 1000);
        this.set({ service_name: serviceName }, age);
      },
    });
  }

  submitted(api: string): void {
    this.submittedTotal.inc(this.labels(api));
  }

  /** A claimed task starts its `attempt`th run. */
  started(api: string, attempt: number): void {
    if (attempt > 1) this.retriedTotal.inc(this.labels(api));
  }

  /** A task this process ran ended; `code` is the error code of a failed one. */
  ended(api: string, status: 'succeeded' | 'failed' | 'cancelled', seconds: number, code?: string): void {
    this.duration.observe({ ...this.labels(api), status }, seconds);
    if (status === 'failed') this.failedTotal.inc({ ...this.labels(api), code: code ?? 'INTERNAL_ERROR' });
  }

  storeFailed(operation: string): void {
    this.storeErrors.inc({ operation, service_name: this.serviceName });
  }

  /** The store fails tasks out of attempts by itself (after a restart, on a claim): count what is new. */
  private addInterrupted(interrupted: Record<string, number>): void {
    for (const [api, count] of Object.entries(interrupted)) {
      const seen = this.interruptedSeen.get(api) ?? 0;
      if (count > seen) this.failedTotal.inc({ ...this.labels(api), code: 'TASK_INTERRUPTED' }, count - seen);
      this.interruptedSeen.set(api, count);
    }
  }

  private labels(api: string): Record<ApiLabels, string> {
    return { api_name: api, service_name: this.serviceName };
  }
}

/** A failure of the store itself, not an answer about a task (unknown id, full, not done). */
function isStoreFailure(err: unknown): boolean {
  return err instanceof TaskStoreUnavailable || !(err instanceof TiffinError);
}

/**
 * The store `storeOf()` gives now (a served service may be given its store after the app is built), with
 * every method forwarded as it is and each failed call counted under the method's name.
 */
function countingFailures(storeOf: () => TaskStore, failed: (operation: string) => void): TaskStore {
  // One wrapper per store and method, made on first use (a task calls the store several times).
  const wrappers = new WeakMap<TaskStore, Map<PropertyKey, (...args: unknown[]) => unknown>>();
  const wrap = (store: TaskStore, name: PropertyKey, fn: (...args: unknown[]) => unknown) => {
    const operation = String(name);
    const note = (err: unknown): never => {
      if (isStoreFailure(err)) failed(operation);
      throw err;
    };
    return (...args: unknown[]) => {
      let out: unknown;
      try {
        out = fn.apply(store, args);
      } catch (err) {
        note(err);
      }
      return out instanceof Promise ? out.catch(note) : out;
    };
  };
  return new Proxy({} as TaskStore, {
    get(_target, name) {
      const store = storeOf();
      const value: unknown = Reflect.get(store, name, store);
      if (typeof value !== 'function') return value;
      let methods = wrappers.get(store);
      if (!methods) {
        methods = new Map();
        wrappers.set(store, methods);
      }
      let wrapped = methods.get(name);
      if (!wrapped) {
        wrapped = wrap(store, name, value as (...args: unknown[]) => unknown);
        methods.set(name, wrapped);
      }
      return wrapped;
    },
    has(_target, name) {
      return Reflect.has(storeOf(), name);
    },
  });
}
