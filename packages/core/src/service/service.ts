import type { DefaultContext, DefaultState, Middleware } from 'koa';
import type { LifecycleContext, ServiceState } from '../context/context.js';
import { InvalidArgument } from '../errors/index.js';
import type { IODescriptor } from '../io/descriptor.js';
import { MemoryTaskStore, type MemoryTaskStoreOptions } from '../tasks/memory-task-store.js';
import type { TaskStore } from '../tasks/task-store.js';
import { registeredApi } from './api-registration.js';
import type { ApiTypesMap, WithApi } from './api-types.js';
import type {
  ApiFunction,
  ApiOptions,
  BatchApiFunction,
  BatchApiOptions,
  InferenceApi,
} from './inference-api.js';
import type { ModelRepositoryControl } from './model-control.js';
import { type MountedMiddleware, type MountOptions, mountedMiddleware } from './mount.js';
import type { ErrorHook, RequestHook, RequestHooks } from './request-hooks.js';
import { groupRules, type RouteGroupOptions, routeTableMiddleware } from './route-group.js';
import { type ServiceCounter, serviceCounter } from './service-counter.js';

// The API's definition, the typed-client map, mounts and counters have files of their own; their names are
// the service's too, as the transports and the other packages import them.
export type { ApiTypes, ApiTypesMap, WithApi } from './api-types.js';
export {
  type ApiFunction,
  type ApiOptions,
  type BatchApiFunction,
  type BatchApiOptions,
  type BatchOptions,
  DEFAULT_TASK_ATTEMPTS,
  type InferenceApi,
  TASK_OPERATIONS,
  type TaskApiOptions,
  type TaskOperation,
} from './inference-api.js';
export type { MountedMiddleware, MountOptions } from './mount.js';
export type { ServiceCounter } from './service-counter.js';

const SERVICE_NAME = /^[a-z0-9](?:[a-z0-9._-]{0,61}[a-z0-9])?$/;

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
  private repository: ModelRepositoryControl | undefined;
  private readonly apiWatchers: Array<(api: InferenceApi) => void> = [];
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
    const api = registeredApi(this.name, this.apiMap, options, fn);
    this.apiMap.set(api.name, api);
    for (const watcher of this.apiWatchers) watcher(api);
    return this as unknown as Service<WithApi<Apis, N, I, O>>;
  }

  get apis(): ReadonlyMap<string, InferenceApi> {
    return this.apiMap;
  }

  /**
   * Call `watcher` with every API registered from now on: the transports of a running server serve an API
   * added while it serves (a model copied into a repository's folder, docs/model-repository.md). Returns the
   * function that stops watching.
   */
  watchApis(watcher: (api: InferenceApi) => void): () => void {
    this.apiWatchers.push(watcher);
    return () => {
      const at = this.apiWatchers.indexOf(watcher);
      if (at >= 0) this.apiWatchers.splice(at, 1);
    };
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
    this.mounted.push(mountedMiddleware(middleware, options));
    return this;
  }

  /**
   * Declare a route group (docs/server.md, route groups): the routes of `options.routes`, all under
   * `options.prefix`, with the group's own auth mode, error shape, deadline and body bound, served in the order
   * mounted among the mounts. Every request under the prefix is the group's (an unknown path there is its 404).
   * HTTP only.
   */
  group(options: RouteGroupOptions): this {
    groupRules(options, 'Service.group');
    const routes = routeTableMiddleware(options.prefix, options.routes ?? {});
    this.mounted.push(mountedMiddleware(routes, options, 'Service.group'));
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
  counter(
    name: string,
    help: string,
    labels: readonly string[],
  ): (values: readonly string[], by?: number) => void {
    const { counter, count } = serviceCounter(name, help, labels);
    this.counterList.push(counter);
    return count;
  }

  /** A gauge of the service's own (a value set, not counted), served on `/metrics` as `counter()`'s are. */
  gauge(
    name: string,
    help: string,
    labels: readonly string[],
  ): (values: readonly string[], value: number) => void {
    const { counter, set } = serviceCounter(name, help, labels, 'gauge');
    this.counterList.push(counter);
    return set;
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

  /**
   * Serve many models from a repository whose models load and unload at run time: the repository extension of
   * the Open Inference Protocol (HTTP and gRPC) and per-model readiness ask `control` (docs/model-repository.md).
   */
  useModelRepository(control: ModelRepositoryControl): this {
    this.repository = control;
    return this;
  }

  /** The repository `useModelRepository` set, if any. */
  get modelRepository(): ModelRepositoryControl | undefined {
    return this.repository;
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
