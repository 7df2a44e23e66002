import type { DefaultContext, DefaultState, Middleware } from 'koa';
import type { BatchContext, Context, LifecycleContext, ServiceState } from '../context/context.js';
import { InvalidArgument, TiffinError } from '../errors/index.js';
import type { BatchInputOf, BatchOutputOf } from '../io/batching.js';
import type { InputOf, IODescriptor, OutputOf } from '../io/descriptor.js';
import { MemoryTaskStore, type MemoryTaskStoreOptions } from '../tasks/memory-task-store.js';
import type { TaskStore } from '../tasks/task-store.js';
import type { ErrorHook, RequestHook, RequestHooks } from './request-hooks.js';

const API_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const RESERVED = new Set(['index', 'swagger', 'docs', 'metrics', 'healthz', 'livez', 'readyz']);
const SERVICE_NAME = /^[a-z0-9](?:[a-z0-9._-]{0,61}[a-z0-9])?$/;

export type ApiFunction<I extends IODescriptor, O extends IODescriptor> = (
  input: InputOf<I>,
  ctx: Context,
) => OutputOf<O> | Promise<OutputOf<O>>;

/** A batchable API's function: one call per batch, with the merged input; returns the batched output. */
export type BatchApiFunction<I extends IODescriptor, O extends IODescriptor> = (
  batch: BatchInputOf<I>,
  ctx: BatchContext,
) => BatchOutputOf<O> | Promise<BatchOutputOf<O>>;

/** Adaptive batching settings of one API (BentoML's names). */
export interface BatchOptions {
  /** Dimension along which requests are stacked and split (default 0). */
  batch_dim: number;
  /** Most rows in one batch (default 32); a request with more rows is refused with 400. */
  max_batch_size: number;
  /** Most milliseconds a request waits for its batch to start (default 100); beyond, 503 + Retry-After. */
  max_latency_ms: number;
  /**
   * Batches that may run at once (default 1), for a function that hands each batch to one of several runners
   * on other threads (a model's worker-thread instances): every idle runner gets a batch. When set (even to 1)
   * the next batch is also dispatched as soon as the function returns, while the answers are being written.
   */
  maxConcurrentBatches?: number;
}

export interface ApiOptions<I extends IODescriptor, O extends IODescriptor> {
  input: I;
  output: O;
  /** API name; defaults to the function's name. */
  name?: string;
  /** URL path; defaults to `/<name>`. */
  route?: string;
  /**
   * The model name the Open Inference Protocol serves the API under (`/v2/models/<protocolName>`, gRPC
   * `model_name`); default the API name. Any non-empty text: the HTTP path carries it URL-encoded. The zero-code
   * service of a model sets it to the model's own name.
   */
  protocolName?: string;
  /** Description shown on the API page. */
  doc?: string;
  /**
   * The request the API page pre-fills and `/docs.json` carries: a JSON value for JSON-bodied descriptors, the
   * text of a text or file body, an object of part values for Multipart. Default: the input descriptor's own
   * (its `fromSample` sample, one of its declared shape and dtype, or its schema model's).
   */
  example?: unknown;
  /** Per-API timeout in seconds (overrides the server's); a task's run has the same limit. */
  timeout?: number;
  /**
   * Serve the API as a task too (docs/tasks.md): besides `POST /<route>`, `POST /<route>/submit` answers 202
   * `{ id }` at once and the call runs in the background through the same path; `GET /<route>/status?id=`,
   * `GET /<route>/get?id=` (the answer `POST /<route>` would have given), `POST /<route>/cancel?id=` and
   * `GET /<route>/events?id=` (server-sent progress, see `Context.progress`) follow it. `{ attempts }`: how
   * many times a task may start when its process stops while it runs (default 2; then it fails with
   * `TASK_INTERRUPTED`): tasks are delivered at least once, so an API with side effects keys them on `ctx.taskId`.
   */
  task?: boolean | TaskApiOptions;
  /**
   * Run calls in adaptive batches (both descriptors must implement `batching`); the function then gets a batch.
   * `batch_dim`, `max_batch_size` and `max_latency_ms` keep the reference framework's names (docs/batching.md).
   */
  batchable?: boolean;
  batch_dim?: number;
  max_batch_size?: number;
  max_latency_ms?: number;
  /** Batches that may run at once (default 1); see `BatchOptions.maxConcurrentBatches`. */
  maxConcurrentBatches?: number;
  /** @deprecated Spelled `maxConcurrentBatches`: an option of Tiffin's own, so camelCase. */
  max_concurrent_batches?: number;
}

/** Options of a batchable API. */
export type BatchApiOptions<I extends IODescriptor, O extends IODescriptor> = ApiOptions<I, O> & {
  batchable: true;
};

/** One registered API. */
export interface InferenceApi<I extends IODescriptor = IODescriptor, O extends IODescriptor = IODescriptor> {
  readonly name: string;
  /** URL path with a leading slash. */
  readonly route: string;
  /** The Open Inference Protocol's name of the API (`ApiOptions.protocolName`, else the API name). */
  readonly protocolName: string;
  readonly input: I;
  readonly output: O;
  readonly doc: string;
  /** The request example given with the API (`ApiOptions.example`); undefined: the descriptor's. */
  readonly example: unknown;
  readonly timeout: number | undefined;
  /** Set when the API is batchable: then `fn` is a `BatchApiFunction`, called by the runtime's batcher. */
  readonly batching: BatchOptions | undefined;
  /** Whether the API is also served as a task (`/<route>/submit` and friends). */
  readonly task: boolean;
  /** Times one of its tasks may start (`ApiOptions.task.attempts`). */
  readonly taskAttempts: number;
  readonly fn: ApiFunction<I, O>;
}

/** The task settings of one API (`ApiOptions.task`). */
/** A counter a service keeps (`Service.counter`), served on the server's `/metrics` under its name. */
export interface ServiceCounter {
  readonly name: string;
  readonly help: string;
  readonly labels: readonly string[];
  /** The count per label values (joined by NUL). */
  readonly counts: ReadonlyMap<string, { readonly values: readonly string[]; readonly value: number }>;
}

export interface TaskApiOptions {
  /** Times a task may start when its process stops while it runs (default 2). */
  attempts?: number;
}

/** Times a task may start by default: once, and once more if its process stopped under it. */
export const DEFAULT_TASK_ATTEMPTS = 2;

/** Type-only record of one API's descriptors, kept in `Service`'s type for typed clients. */
export interface ApiTypes<I extends IODescriptor = IODescriptor, O extends IODescriptor = IODescriptor> {
  readonly input: I;
  readonly output: O;
}

/** The APIs a `Service` type carries, by name (none to start with). */
export type ApiTypesMap = Record<string, ApiTypes>;

/** `Apis` plus API `N` (unchanged when `N` is not a literal name). */
export type WithApi<
  Apis extends ApiTypesMap,
  N extends string,
  I extends IODescriptor,
  O extends IODescriptor,
> = string extends N ? Apis : Apis & { [K in N]: ApiTypes<I, O> };

export type LifecycleHook = (ctx: LifecycleContext) => void | Promise<void>;

export interface ServiceOptions {
  /** Markdown shown at the top of the API page. */
  doc?: string;
  version?: string;
  /** Model tags (`name:version`) the service uses; `tiffin build` packages them. */
  models?: string[];
  /**
   * Where the service's tasks (APIs registered with `task: true`) live and how many run at once. Default: in
   * this process's memory, 64 tasks held, results kept 600 s, 64 MiB per answer and 512 MiB in all, one task
   * running at a time.
   */
  tasks?: ServiceTaskOptions;
}

/** The task settings of a service (`ServiceOptions.tasks`). */
export interface ServiceTaskOptions extends Partial<MemoryTaskStoreOptions> {
  /**
   * A store of your own (a durable one shared by replicas); the size options above then belong to it.
   * Default: a `MemoryTaskStore`, lost on restart and not shared between replicas.
   */
  store?: TaskStore;
  /** Tasks that run at once in this process (default 1); each also holds one of the server's call permits. */
  concurrency?: number;
}

/** How `Service.mount` mounts a middleware. */
export interface MountOptions {
  /**
   * Answer without the API token (`apiToken` / `$TIFFIN_API_TOKEN`): a webhook, a public page. Default false:
   * with a token set, a mounted route needs it like the APIs do.
   */
  public?: boolean;
  /**
   * Seconds a request may take before its answer starts while this mount runs it (counted from the request's
   * start), instead of the server's `timeout`, longer or shorter, as an API's own `timeout`; then the 504 is
   * sent and `ctx.state.signal` fires. An API call keeps its API's deadline (docs/server.md, your own routes).
   */
  timeout?: number;
}

/** Koa middleware mounted on a service's HTTP server, with its options (see `Service.mount`). */
export interface MountedMiddleware {
  readonly middleware: Middleware;
  readonly public: boolean;
  /** Seconds, see `MountOptions.timeout`. */
  readonly timeout?: number;
}

/** A readiness condition of a service: `true` when ready, else `false` or the reason (see `addReadinessCheck`). */
export type ReadinessCheck = () => true | false | string;

/**
 * A named set of APIs plus lifecycle hooks and shared state. `Apis` is type-only: each `api()` call with a
 * literal `options.name` returns the service typed with that API added, so a chained service's
 * `typeof svc` describes its APIs to `@tiffin/client`.
 */
// biome-ignore lint/complexity/noBannedTypes: an empty object type is the neutral element of the API map.
export class Service<Apis extends ApiTypesMap = {}> {
  /** Type-only (never set): the APIs registered with a literal name, for typed clients. */
  declare readonly '~apis'?: Apis;
  readonly name: string;
  readonly doc: string;
  readonly version: string | undefined;
  readonly models: readonly string[];
  readonly state: ServiceState = {};
  private readonly apiMap = new Map<string, InferenceApi>();
  private readonly startupHooks: LifecycleHook[] = [];
  private readonly shutdownHooks: LifecycleHook[] = [];
  private readonly hooks = {
    onRequest: [] as RequestHook[],
    onResponse: [] as RequestHook[],
    onError: [] as ErrorHook[],
  };
  private readonly readinessChecks: ReadinessCheck[] = [];
  private readonly counterList: ServiceCounter[] = [];
  private readonly mounted: MountedMiddleware[] = [];
  private taskStore: TaskStore;
  /** The bounds given for the default store (`ServiceOptions.tasks`), which a store from `tiffin serve` keeps too. */
  readonly taskLimits: Readonly<Partial<MemoryTaskStoreOptions>>;
  /** Whether the task store is the default one, which `useTaskStore` may replace. */
  private taskStoreIsDefault: boolean;
  /** Tasks run at once in this process. */
  readonly taskConcurrency: number;

  constructor(name: string, options: ServiceOptions = {}) {
    const lower = name.toLowerCase();
    if (!SERVICE_NAME.test(lower)) {
      throw new InvalidArgument(
        `Invalid service name '${name}': use 1-63 characters of a-z, 0-9, '.', '_' or '-', starting and ending with a letter or digit`,
      );
    }
    this.name = lower;
    this.doc = options.doc ?? '';
    this.version = options.version;
    this.models = options.models ?? [];
    const { store, concurrency = 1, ...memory } = options.tasks ?? {};
    if (!Number.isInteger(concurrency) || concurrency < 1)
      throw new InvalidArgument(`tasks.concurrency must be an integer >= 1, got ${String(concurrency)}`);
    this.taskLimits = memory;
    this.taskStore = store ?? new MemoryTaskStore(memory);
    this.taskStoreIsDefault = store === undefined;
    this.taskConcurrency = concurrency;
    this.readinessChecks.push(() => this.taskStore.notReadyReason?.() ?? true);
  }

  /** Where this service's tasks live (see `ServiceOptions.tasks`). */
  get tasks(): TaskStore {
    return this.taskStore;
  }

  /**
   * Put the service's tasks in `store` (`tiffin serve` does, with its `--tasks` store) unless the service was
   * given a store of its own; the service closes it on shutdown. Returns whether it was used.
   */
  useTaskStore(store: TaskStore): boolean {
    if (!this.taskStoreIsDefault) return false;
    this.taskStore = store;
    this.taskStoreIsDefault = false;
    this.onShutdown(async () => {
      await store.close?.();
    });
    return true;
  }

  /**
   * Register a batchable API: `fn` gets the merged input of a batch and returns the batched output
   * (docs/batching.md). Returns this service, typed with the API added, like the other overload.
   */
  api<I extends IODescriptor, O extends IODescriptor, N extends string = string>(
    options: BatchApiOptions<I, O> & { name?: N },
    fn: BatchApiFunction<I, O>,
  ): Service<WithApi<Apis, N, I, O>>;
  /**
   * Register an API; returns this service, typed with the API added when `options.name` is a literal
   * (a function's name is not visible to the type system), so calls can be chained:
   * `const svc = new Service('s').api({ name: 'a', ... }, fn).api(...)`.
   */
  api<I extends IODescriptor, O extends IODescriptor, N extends string = string>(
    options: ApiOptions<I, O> & { name?: N; batchable?: false },
    fn: ApiFunction<I, O>,
  ): Service<WithApi<Apis, N, I, O>>;
  api<I extends IODescriptor, O extends IODescriptor, N extends string = string>(
    options: ApiOptions<I, O> & { name?: N },
    fn: ApiFunction<I, O> | BatchApiFunction<I, O>,
  ): Service<WithApi<Apis, N, I, O>> {
    const name = options.name ?? fn.name;
    if (!name || !API_NAME.test(name)) {
      throw new InvalidArgument(
        `Invalid API name: '${name}' (use letters, digits and underscores, not starting with a digit; anonymous functions need options.name)`,
      );
    }
    if (RESERVED.has(name))
      throw new InvalidArgument(`Reserved API name: '${name}' is reserved for infra endpoints`);
    if (this.apiMap.has(name))
      throw new TiffinError(`API ${name} is already defined in Service ${this.name}`);
    const rawRoute = options.route ?? name;
    if (/[?#]/.test(rawRoute) || rawRoute.startsWith('//') || rawRoute.startsWith(':')) {
      throw new InvalidArgument(`The path ${rawRoute} contains illegal url characters`);
    }
    const route = rawRoute.startsWith('/') ? rawRoute : `/${rawRoute}`;
    if (RESERVED.has(route.slice(1)) || route === '/') {
      throw new InvalidArgument(`Reserved API route: '${rawRoute}' is reserved for infra endpoints`);
    }
    const task = options.task === true || typeof options.task === 'object';
    const attempts =
      (typeof options.task === 'object' ? options.task.attempts : undefined) ?? DEFAULT_TASK_ATTEMPTS;
    if (!Number.isInteger(attempts) || attempts < 1)
      throw new InvalidArgument(`task.attempts must be an integer >= 1, got ${String(attempts)}`);
    const routes = servedRoutes(route, task);
    const protocolName = options.protocolName ?? name;
    if (typeof protocolName !== 'string' || protocolName === '' || protocolName.length > 256) {
      throw new InvalidArgument(`Invalid protocolName for API ${name}: use 1-256 characters`);
    }
    for (const other of this.apiMap.values()) {
      const taken = servedRoutes(other.route, other.task).find((r) => routes.includes(r));
      if (taken) throw new InvalidArgument(`API route ${taken} is already used by API ${other.name}`);
      if (other.protocolName === protocolName) {
        throw new InvalidArgument(
          `Protocol model name '${protocolName}' is already used by API ${other.name}`,
        );
      }
    }
    this.apiMap.set(name, {
      name,
      route,
      protocolName,
      input: options.input,
      output: options.output,
      doc: options.doc ?? '',
      example: options.example,
      timeout: options.timeout,
      batching: options.batchable ? batchOptions(name, options) : undefined,
      task,
      taskAttempts: attempts,
      fn: fn as unknown as ApiFunction<IODescriptor, IODescriptor>,
    });
    return this as unknown as Service<WithApi<Apis, N, I, O>>;
  }

  get apis(): ReadonlyMap<string, InferenceApi> {
    return this.apiMap;
  }

  /**
   * Mount Koa middleware on the service's HTTP server (a `@koa/router`'s `routes()` and `allowedMethods()`,
   * a `koa-mount`ed app, `koa-static`, ...), in the order mounted, before API routing. It may answer a request
   * (`ctx.body = ...`); what it passes on with `await next()` reaches the APIs as before. The server's request
   * id, access log, metrics, body limit, timeout, concurrency limit, drain and error body hold for it, and with
   * an API token set it needs the token unless mounted `{ public: true }`. HTTP only: gRPC does not see it.
   */
  mount<StateT = DefaultState, ContextT = DefaultContext>(
    middleware: Middleware<StateT, ContextT>,
    options: MountOptions = {},
  ): this {
    if (typeof middleware !== 'function') {
      throw new InvalidArgument('Service.mount takes a Koa middleware: a function (ctx, next)');
    }
    // Typed as Koa's `app.use` takes it: routers extend the context with their own fields.
    const { timeout } = options;
    if (timeout !== undefined && !(Number.isFinite(timeout) && timeout > 0)) {
      throw new InvalidArgument(
        `Service.mount: timeout must be a positive number of seconds, got ${timeout}`,
      );
    }
    this.mounted.push({
      middleware: middleware as unknown as Middleware,
      public: options.public === true,
      ...(timeout === undefined ? {} : { timeout }),
    });
    return this;
  }

  /** The middleware mounted with `mount()`, in order. */
  get mounts(): readonly MountedMiddleware[] {
    return this.mounted;
  }

  onStartup(hook: LifecycleHook): this {
    this.startupHooks.push(hook);
    return this;
  }

  onShutdown(hook: LifecycleHook): this {
    this.shutdownHooks.push(hook);
    return this;
  }

  /**
   * Run `hook` at the start of every HTTP request, once its request id and route are known and before CORS,
   * the API token, the concurrency gate and the route: it may read the request and set response headers, and
   * an error it throws (a `TiffinError` such as `Unauthorized`) is answered as the request's error.
   */
  onRequest(hook: RequestHook): this {
    this.hooks.onRequest.push(hook);
    return this;
  }

  /**
   * Run `hook` once every HTTP request's answer is settled (the route's answer or the error body), before it
   * is written: it may read the status and set response headers. An error it throws is logged; the answer
   * goes out as it was.
   */
  onResponse(hook: RequestHook): this {
    this.hooks.onResponse.push(hook);
    return this;
  }

  /**
   * Run `hook` when an HTTP request fails with an error (a thrown error, a timeout, a refused call), before
   * its error body is written: to report it. An error the hook throws is logged; the answer stays the error's.
   */
  onError(hook: ErrorHook): this {
    this.hooks.onError.push(hook);
    return this;
  }

  /** The hooks added with `onRequest`, `onResponse` and `onError`, in order. */
  get requestHooks(): RequestHooks {
    return this.hooks;
  }

  /**
   * A counter of the service's own events (work it cancelled, shed, ...), served on `/metrics` as
   * `tiffin_api_server_<name>` with `labels` and the service's name and version. The returned function counts
   * one event under `values` (one per label, each from a small closed set: bounded series).
   */
  counter(name: string, help: string, labels: readonly string[]): (values: readonly string[]) => void {
    const counts = new Map<string, { values: readonly string[]; value: number }>();
    this.counterList.push({ name, help, labels, counts });
    return (values) => {
      const key = values.join('\0');
      const series = counts.get(key);
      if (series) series.value++;
      else counts.set(key, { values: [...values], value: 1 });
    };
  }

  /** The counters made with `counter()`. */
  get counters(): readonly ServiceCounter[] {
    return this.counterList;
  }

  /**
   * Add a condition for readiness: after startup, `/readyz` and `/v2/health/ready` say ready
   * only while every check returns `true`; a string is the reason it is not ready (e.g. "the model worker
   * exited"). Checks run on every readiness probe, so they must be cheap and synchronous. API calls are not
   * refused by them: an orchestrator stops routing to a pod that is not ready, the pod keeps answering.
   */
  addReadinessCheck(check: ReadinessCheck): this {
    this.readinessChecks.push(check);
    return this;
  }

  /** The first failing readiness check's reason, or `null` when every check passes. */
  notReadyReason(): string | null {
    for (const check of this.readinessChecks) {
      const result = check();
      if (result !== true) return typeof result === 'string' && result ? result : 'a readiness check failed';
    }
    return null;
  }

  /**
   * Prepare every API's descriptors (`IODescriptor.prepare`: modules they load, threads they start), then run
   * startup hooks in registration order. The server calls this before it is ready, so the first request does
   * not pay for loading on the event loop.
   */
  async startup(): Promise<void> {
    const descriptors = new Set<IODescriptor>();
    for (const api of this.apiMap.values()) descriptors.add(api.input).add(api.output);
    await Promise.all([...descriptors].map((d) => d.prepare()));
    for (const hook of this.startupHooks) await hook({ state: this.state });
  }

  /** Run shutdown hooks in reverse registration order. */
  async shutdown(): Promise<void> {
    for (const hook of [...this.shutdownHooks].reverse()) await hook({ state: this.state });
  }
}

/** The operations of a task API, each served at `<route>/<operation>`. */
export const TASK_OPERATIONS = ['submit', 'status', 'get', 'cancel', 'events'] as const;
export type TaskOperation = (typeof TASK_OPERATIONS)[number];

/** The paths an API answers on: its route, and with `task` its task routes. */
function servedRoutes(route: string, task: boolean): string[] {
  return task ? [route, ...TASK_OPERATIONS.map((op) => `${route}/${op}`)] : [route];
}

/** Check a batchable API's settings and descriptors at registration (not at the first request). */
function batchOptions(api: string, options: ApiOptions<IODescriptor, IODescriptor>): BatchOptions {
  for (const [side, descriptor] of [
    ['input', options.input],
    ['output', options.output],
  ] as const) {
    if (!descriptor.batching) {
      throw new InvalidArgument(
        `API '${api}' is batchable, but its ${side} descriptor ${descriptor.displayName} cannot batch (it implements no \`batching\` hooks); drop \`batchable\` or use a descriptor that batches (NumpyNdarray, JSON, Text, PandasDataFrame, PandasSeries, Image)`,
      );
    }
  }
  const resolved: BatchOptions = {
    batch_dim: options.batch_dim ?? 0,
    max_batch_size: options.max_batch_size ?? 32,
    max_latency_ms: options.max_latency_ms ?? 100,
  };
  // Only when given: one batch at a time is the default and stays out of the API's description.
  const concurrent = options.maxConcurrentBatches ?? options.max_concurrent_batches;
  if (concurrent !== undefined) resolved.maxConcurrentBatches = concurrent;
  const check = (name: keyof BatchOptions, ok: boolean, rule: string) => {
    if (!ok)
      throw new InvalidArgument(`API '${api}': ${name} must be ${rule}, got ${String(resolved[name])}`);
  };
  check('batch_dim', Number.isInteger(resolved.batch_dim) && resolved.batch_dim >= 0, 'an integer >= 0');
  check(
    'max_batch_size',
    Number.isInteger(resolved.max_batch_size) && resolved.max_batch_size >= 1,
    'an integer >= 1',
  );
  check(
    'maxConcurrentBatches',
    resolved.maxConcurrentBatches === undefined ||
      (Number.isInteger(resolved.maxConcurrentBatches) && resolved.maxConcurrentBatches >= 1),
    'an integer >= 1',
  );
  check(
    'max_latency_ms',
    Number.isFinite(resolved.max_latency_ms) && resolved.max_latency_ms > 0,
    'a number > 0',
  );
  return resolved;
}
