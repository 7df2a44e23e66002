import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Span, trace } from '@opentelemetry/api';
import type { HttpRequest } from '../http/request.js';
import type { Cookie } from '../http/response.js';
import type { TaskProgress } from '../tasks/task-store.js';

/** Per-request response settings a handler may change (docs/spec/io-descriptors.md §10.4, D11). */
export class ResponseContext {
  /** Status code of the response (default 200). */
  status = 200;
  private headerStore: Headers | undefined;
  readonly cookies: Cookie[] = [];

  /** Headers sent before the descriptor's own; `append` keeps duplicates. Made on first use. */
  get headers(): Headers {
    this.headerStore ??= new Headers();
    return this.headerStore;
  }

  setCookie(key: string, value: string, options: Omit<Cookie, 'key' | 'value'> = {}): void {
    this.cookies.push({ key, value, ...options });
  }

  /** Alias of `status`, under the reference's name. */
  get statusCode(): number {
    return this.status;
  }
  set statusCode(value: number) {
    this.status = value;
  }

  /** Headers in wire order with lower-case names (set-cookie excluded: cookies go last). */
  headerList(): Array<[string, string]> {
    return this.headerStore ? [...this.headerStore.entries()] : [];
  }
}

/** Process-wide state shared by lifecycle hooks and every request. */
export type ServiceState = Record<string, unknown>;

/** Where a task's progress reports go (set by the runtime when the call runs as a task). */
export interface TaskCall {
  readonly id: string;
  report(progress: TaskProgress): void;
}

/**
 * What an API function gets as its second argument: the request, the response settings and the service
 * state. A fresh one per call; `state` is the service's, shared. Over HTTP the server's exchange of the
 * request is itself the context (one object per request); gRPC and the task runner make one per call.
 */
export class Context {
  readonly request: HttpRequest;
  readonly state: ServiceState;
  /** Set by the server: id of this request in logs and the `x-request-id` header. */
  readonly requestId: string;
  /** Where `progress` reports go when the call runs as a task. */
  protected readonly task: TaskCall | undefined;
  // Made on first use (most calls use neither): declared, so that constructing a context stores nothing more.
  declare protected responseSettings: ResponseContext | undefined;
  declare private tempDirPromise: Promise<string> | undefined;

  constructor(
    request: HttpRequest,
    state: ServiceState,
    requestId = '',
    task: TaskCall | undefined = undefined,
  ) {
    this.request = request;
    this.state = state;
    this.requestId = requestId;
    this.task = task;
  }

  /** The handler's response settings: status, headers, cookies (made on first use: most handlers set none). */
  get response(): ResponseContext {
    this.responseSettings ??= new ResponseContext();
    return this.responseSettings;
  }

  /** The response settings if the handler (or a descriptor) looked at them, else undefined: nothing to apply. */
  get responseIfUsed(): ResponseContext | undefined {
    return this.responseSettings;
  }

  /** The task's id when this call runs as a task (`/<api>/submit`); undefined for a synchronous call. */
  get taskId(): string | undefined {
    return this.task?.id;
  }

  /**
   * The span this code runs in when the request is traced (docs/observability.md): in an API function its `run`
   * span (in a batched one the `batch` span), in a mounted route the request's; undefined when not traced. Add
   * attributes or events to it, or start child spans through the OpenTelemetry API's active context.
   */
  get span(): Span | undefined {
    return trace.getActiveSpan();
  }

  /**
   * Report progress: `step` of `totalSteps` (null when not known yet), with an optional small JSON `detail`
   * (a preview, a timestep) that the task's event stream forwards. A synchronous call has no one to tell:
   * there it does nothing.
   */
  progress(step: number, totalSteps: number | null, detail?: Readonly<Record<string, unknown>>): void {
    this.task?.report({ step, totalSteps, detail });
  }

  /** A per-request temporary directory, removed after the request. */
  tempDir(): Promise<string> {
    if (this.tempDirPromise === undefined) {
      this.tempDirPromise = mkdtemp(join(tmpdir(), 'tiffin-req-'));
      this.removeTempDirWhenDone();
    }
    return this.tempDirPromise;
  }

  /** Whether `tempDir()` was called (so `dispose()` has something to remove). */
  get usedTempDir(): boolean {
    return this.tempDirPromise !== undefined;
  }

  /** Called by the server when the request is finished. */
  async dispose(): Promise<void> {
    if (this.tempDirPromise) await rm(await this.tempDirPromise, { recursive: true, force: true });
  }

  /**
   * Arrange for `dispose()` once the call is over, when the first temp dir is made. Here nothing: whoever made
   * the context disposes of it (the runtime, the batcher); the HTTP exchange, which lives as long as its
   * request, does it when the request closes.
   */
  protected removeTempDirWhenDone(): void {}
}

/** What lifecycle hooks receive: the service state (no request). */
export interface LifecycleContext {
  readonly state: ServiceState;
}

/**
 * The context a batchable API function gets: one for the whole batch. `request` is the first caller's;
 * response settings (status, headers, cookies) apply to every caller in the batch. `failRow` reports one
 * row's failure: the caller that sent that row gets `error`, the others still get their rows.
 */
export class BatchContext extends Context {
  private readonly failures = new Map<number, Error>();

  constructor(
    request: HttpRequest,
    state: ServiceState,
    requestId: string,
    /** Rows in this batch. */
    readonly rows: number,
  ) {
    super(request, state, requestId);
  }

  /** Fail row `row` (0-based along the batch dimension); the output must still hold a value for it. */
  failRow(row: number, error: Error): void {
    if (!Number.isInteger(row) || row < 0 || row >= this.rows) {
      throw new RangeError(`failRow: row ${row} is outside this batch of ${this.rows} rows`);
    }
    if (!this.failures.has(row)) this.failures.set(row, error);
  }

  /** The first failure among rows [start, start + count), if any (the runtime asks per caller). */
  failureIn(start: number, count: number): Error | undefined {
    if (this.failures.size === 0) return undefined;
    for (let row = start; row < start + count; row++) {
      const failure = this.failures.get(row);
      if (failure) return failure;
    }
    return undefined;
  }
}
