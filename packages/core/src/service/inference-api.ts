import type { BatchContext, Context } from '../context/context.js';
import type { BatchInputOf, BatchOutputOf } from '../io/batching.js';
import type { InputOf, IODescriptor, OutputOf } from '../io/descriptor.js';

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
   * Calls of this API that run at once (docs/server.md, queues): set, the API has a queue of its own and its
   * calls no longer count against the server's `maxConcurrency`. Calls past it wait (`queue`), most urgent first.
   */
  concurrency?: number;
  /**
   * Calls that may wait for one of the `concurrency` slots (default 0 with `concurrency`: refused at once); one
   * more is refused with 503 `API_QUEUE_FULL` and a `Retry-After` from the queue's measured drain rate.
   */
  queue?: number;
  /** Calls one client may have waiting (default a quarter of `queue`); one more gets 429 `API_QUEUE_CLIENT_FULL`. */
  queuePerClient?: number;
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
  /**
   * Keep answers and send them again for the same input (docs/cache.md): `true` (5 minutes, 1 MiB an answer)
   * or `{ ttl, maxBytes, when }`. The key is the service's version, the API and the decoded input; not for
   * batchable APIs.
   */
  cache?: boolean | ApiCacheOptions;
}

/** An API's response cache (`ApiOptions.cache`). */
export interface ApiCacheOptions {
  /** Seconds an answer is kept (default 300; 0: until evicted). */
  ttl?: number;
  /** Answers over this many bytes are not kept (default 1 MiB). */
  maxBytes?: number;
  /** Whether this decoded input may be cached (e.g. only a seeded generation); default every input. */
  when?: (input: unknown) => boolean;
  /** Request headers the answer depends on besides the input (e.g. `accept`): their values join the key. */
  vary?: readonly string[];
  /**
   * What the answers depend on besides the service's version and the input (a model's tag, its files'
   * fingerprint), read for each call: it joins the key, so a new one is a new set of keys.
   */
  version?: string | (() => string);
}

/** An API's cache settings as registered. */
export interface ApiCacheSettings {
  /** How long an answer is kept, in ms (0: until evicted). */
  ttlMs: number;
  /** Answers over this many bytes are not kept. */
  maxBytes: number;
  when: ((input: unknown) => boolean) | undefined;
  /** Lower-cased names of the request headers whose values join the key. */
  vary: readonly string[];
  /** What joins the service's version in the key (`ApiCacheOptions.version`), or undefined. */
  version: string | (() => string) | undefined;
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
  /** The API's own queue (`ApiOptions.concurrency`, `queue`, `queuePerClient`); undefined: the server's gate. */
  readonly admission: ApiAdmission | undefined;
  /** Whether the API is also served as a task (`/<route>/submit` and friends). */
  readonly task: boolean;
  /** Times one of its tasks may start (`ApiOptions.task.attempts`). */
  readonly taskAttempts: number;
  /** The API's response cache (`ApiOptions.cache`), or undefined. */
  readonly cache?: ApiCacheSettings | undefined;
  readonly fn: ApiFunction<I, O>;
}

/** How many calls of one API run at once and how many may wait (`ApiOptions.concurrency` and `queue`). */
export interface ApiAdmission {
  readonly concurrency: number;
  readonly queue: number;
  readonly perClient: number | undefined;
}

/** The task settings of one API (`ApiOptions.task`). */
export interface TaskApiOptions {
  /** Times a task may start when its process stops while it runs (default 2). */
  attempts?: number;
}

/** Times a task may start by default: once, and once more if its process stopped under it. */
export const DEFAULT_TASK_ATTEMPTS = 2;

/** The operations of a task API, each served at `<route>/<operation>`. */
export const TASK_OPERATIONS = ['submit', 'status', 'get', 'cancel', 'events'] as const;
export type TaskOperation = (typeof TASK_OPERATIONS)[number];
