import type { Tracer } from '@opentelemetry/api';
import type { Registry } from 'prom-client';
import type { Context } from '../context/context.js';
import { GatewayTimeout, ServiceUnavailable } from '../errors/index.js';
import type { AnyBatching } from '../io/batching.js';
import { DEFAULT_LIMITS, type Limits } from '../limits/limits.js';
import type { Logger } from '../logging/logger.js';
import type { InferenceApi, Service } from '../service/service.js';
import type { CallTrace } from '../tracing/call-trace.js';
import { ApiQueue } from './admission/api-queue.js';
import { QueueMetrics } from './admission/queue-metrics.js';
import type { RuntimeCall } from './api-call.js';
import { BatchMetrics } from './batch-metrics.js';
import { Batcher, type BatchFunction } from './batcher.js';
import { BodyBudget, bodyBudgetMetrics, DEFAULT_MAX_BUFFERED_BYTES } from './body-budget.js';
import { ConcurrencyGate } from './concurrency-gate.js';
import { Deadlines, type DeadlineWatch, EXPIRED } from './deadlines.js';
import type { Invocation } from './invocation.js';

/** Whether `value` is a promise (or any thenable) rather than a value at hand (the steps of `invoke`). */
export function isThenable(value: unknown): value is PromiseLike<unknown> {
  return value !== null && typeof (value as PromiseLike<unknown> | undefined)?.then === 'function';
}

export interface RuntimeOptions {
  /**
   * Seconds a call may take before its answer starts; an API's own `timeout` wins, and a mount's for the
   * requests it runs (`retime`).
   */
  timeout: number;
  /** Calls handled at once; one more is refused with 503 + Retry-After. */
  maxConcurrency: number;
  /** Seconds sent in `Retry-After` with that 503. */
  retryAfter: number;
  logger: Logger;
  /** Whether the service may take calls (startup hooks ran, not draining). */
  isReady: () => boolean;
  /** Where batching metrics go (absent: none). */
  registry?: Registry;
  /** Input bounds every transport applies (default `DEFAULT_LIMITS`). */
  limits?: Readonly<Limits>;
  /** Bytes of request bodies held across all calls in flight (default 256 MiB); see `BodyBudget`. */
  maxBufferedBytes?: number;
  /** The tracer every transport's server spans and the task runner's spans use (absent: no tracing). */
  tracer?: Tracer | undefined;
}

/**
 * How a transport reads an API's input from its message and writes the output as its answer (the
 * descriptors' HTTP or gRPC side). Made once per API and transport.
 */
export interface TransportCodec<Message, Answer> {
  /** The input, or a promise of it (as descriptors answer: at once when they need not wait). */
  decode(message: Message, ctx: Context): unknown;
  encode(output: unknown, ctx: Context): Answer | Promise<Answer>;
}

/**
 * The one caller of API functions, for every transport. It owns the concurrency gate, the deadline, the
 * per-call `Context` and the batchers of batchable APIs; the HTTP server and the gRPC server are adapters that
 * turn their request into an `Invocation`, a message and a `TransportCodec`, and write back what `invoke`
 * returns.
 */
export class Runtime {
  readonly gate: ConcurrencyGate;
  /** The bound on request-body bytes held across calls, shared by every transport of this runtime. */
  readonly bodyBudget: BodyBudget;
  private readonly deadlines = new Deadlines();
  private readonly batchers = new Map<string, Batcher>();
  /** The queues of the APIs that declare a `concurrency` of their own (docs/spec/io-descriptors.md §10.9). */
  private readonly queues = new Map<string, ApiQueue>();
  private readonly queueMetrics: QueueMetrics | undefined;
  private readonly batchMetrics: BatchMetrics | undefined;

  constructor(
    readonly service: Service,
    private readonly options: RuntimeOptions,
  ) {
    this.gate = new ConcurrencyGate(options.maxConcurrency, options.retryAfter);
    const registry = options.registry;
    this.bodyBudget = new BodyBudget(
      options.maxBufferedBytes ?? DEFAULT_MAX_BUFFERED_BYTES,
      options.retryAfter,
      registry ? bodyBudgetMetrics(registry, service.name, () => this.bodyBudget.held) : undefined,
    );
    this.queueMetrics = registry ? new QueueMetrics(registry, service.name) : undefined;
    this.batchMetrics = registry ? new BatchMetrics(registry, service.name) : undefined;
    for (const api of service.apis.values()) this.addApi(api);
    // An API registered while serving (a repository's new model) gets its queue and batcher too.
    service.watchApis((api) => this.addApi(api));
  }

  /** The batcher and queue of one API (at start, or for one registered while serving). */
  private addApi(api: InferenceApi): void {
    const own = api.admission;
    if (own && !this.queues.has(api.name)) {
      const remainingMs = (call: Invocation) =>
        this.deadlineSeconds(call) * 1000 - (performance.now() - call.startedAt);
      const options = {
        concurrency: own.concurrency,
        size: own.queue,
        perClient: own.perClient,
        retryAfter: this.options.retryAfter,
        remainingMs,
      };
      this.queues.set(api.name, new ApiQueue(api.name, options, this.queueMetrics));
    }
    if (!api.batching || this.batchers.has(api.name)) return;
    const fn = api.fn as unknown as BatchFunction;
    const input = api.input.batching as AnyBatching;
    const output = api.output.batching as AnyBatching;
    this.batchers.set(api.name, new Batcher(api.name, fn, input, output, api.batching, this.batchMetrics));
  }

  /** The tracer of this runtime's transports (absent: they make no span). */
  get tracer(): Tracer | undefined {
    return this.options.tracer;
  }

  /** Input bounds every transport applies to calls through this runtime. */
  get limits(): Readonly<Limits> {
    return this.options.limits ?? DEFAULT_LIMITS;
  }

  /** Throws the 503 while the service may not take calls (starting, or draining). */
  assertReady(): void {
    if (!this.options.isReady()) throw new ServiceUnavailable('The service is starting; try again shortly');
  }

  /** The batcher of a batchable API (tests, diagnostics). */
  batcher(apiName: string): Batcher | undefined {
    return this.batchers.get(apiName);
  }

  /** The queue of an API with a `concurrency` of its own (tests, diagnostics). */
  queue(apiName: string): ApiQueue | undefined {
    return this.queues.get(apiName);
  }

  /**
   * Take one of the server's concurrency permits for `call` until it closes (or `release` is called earlier,
   * as for an event stream, which has a gate of its own); throws the 503 when none is free.
   */
  admit(call: Invocation): () => void {
    const release = this.gate.enter();
    call.onClose.push(release);
    return release;
  }

  /**
   * `admit` for a call of an API: for an API with a queue of its own, one of its slots instead, the promise of
   * one when the call waits (docs/spec/io-descriptors.md §10.9: 503 or 429 when it may not wait, its abort's
   * reason when its deadline passes or its client leaves while it waits).
   */
  admitCall(call: Invocation): (() => void) | Promise<() => void> {
    const queue = call.api?.admission ? this.queues.get(call.api.name) : undefined;
    if (!queue) return this.admit(call);
    return this.enterQueue(call, queue);
  }

  /**
   * A permit of API `apiName`'s own queue for a request that is no call of it (a route group's route that
   * does the API's work, as a compatible API's does), held until the request closes; undefined when that API
   * has no queue of its own. The request's `urgency` and `client` order and share it as a call's would.
   */
  admitTo(call: Invocation, apiName: string): Promise<void> | undefined {
    // The client's own deadline (`Tiffin-Timeout`) counts from the request's start, its wait included, in
    // this queue or in the work's own (a generator's).
    if (call.clientTimeout !== undefined) this.rewatch(call);
    const queue = this.queues.get(apiName);
    if (!queue) return undefined;
    try {
      const entered = this.enterQueue(call, queue);
      return isThenable(entered) ? entered.then(() => undefined) : Promise.resolve();
    } catch (err) {
      return Promise.reject(err);
    }
  }

  private enterQueue(call: Invocation, queue: ApiQueue): (() => void) | Promise<() => void> {
    const entered = queue.enter(call);
    if (!isThenable(entered)) {
      call.onClose.push(entered);
      return entered;
    }
    return entered.then((release) => {
      // A call that ended as its slot came (closed, timed out) hands the slot on at once.
      if (call.timedOut || call.abort.isAborted) {
        release();
        throw call.abort.isAborted
          ? abortReason(call)
          : new ServiceUnavailable('The call ended while it waited');
      }
      call.onClose.push(release);
      return release;
    });
  }

  /**
   * Run `work` under the call's deadline (the API's `timeout`, else the server's, or the mount's the request is
   * in: `retime`). When it passes, the call's abort signal fires and `GatewayTimeout` is thrown; the work's
   * late result or error is only logged.
   */
  async withDeadline<T>(call: Invocation, work: Promise<T>): Promise<T> {
    // A request that is no API call keeps its watch: a mount may move its deadline (`retime`).
    const holder = call.api ? undefined : call;
    const outcome = await this.deadlines.race(work, this.deadlineSeconds(call), call.startedAt, holder);
    if (outcome !== EXPIRED) return outcome;
    work.catch((err: unknown) => this.failedAfterDeadline(call, err));
    throw this.expire(call);
  }

  /**
   * `withDeadline` for a transport that settles the work itself (the HTTP pipeline: no promise per request):
   * when the deadline passes first, the call is marked timed out, its abort signal fires and `expired` gets
   * the `GatewayTimeout`. Clear what it returns (`clearDeadline`) once the work finished.
   */
  watchDeadline(call: Invocation, expired: (error: GatewayTimeout) => void): DeadlineWatch | undefined {
    return this.deadlines.watch(this.deadlineSeconds(call), call.startedAt, () => expired(this.expire(call)));
  }

  clearDeadline(watch: DeadlineWatch): void {
    this.deadlines.clear(watch);
  }

  /**
   * Make the deadline of a request that is no API call `seconds` counted from its start (undefined: the
   * server's `timeout`), whether its work is watched yet or not: a mount's own `timeout`, set as the request
   * enters that mount (docs/server.md, your own routes). An API call keeps its API's deadline.
   */
  retime(call: Invocation, seconds: number | undefined): void {
    if (call.api || call.ownTimeout === seconds) return;
    call.ownTimeout = seconds;
    const watch = call.deadlineWatch;
    if (watch) this.deadlines.move(watch, this.deadlineSeconds(call), call.startedAt);
  }

  /**
   * Count the call's deadline again from its start, as its client's own (`clientTimeout`, read once the body
   * is in: v2 `parameters.timeout`) may have shortened it while its work was already watched.
   */
  rewatch(call: Invocation): void {
    const watch = call.deadlineWatch;
    if (watch) this.deadlines.move(watch, this.deadlineSeconds(call), call.startedAt);
  }

  /** Log a call's failure that came after its deadline had answered it. */
  failedAfterDeadline(call: Invocation, err: unknown): void {
    this.options.logger.log('warn', 'handler failed after its timeout', {
      requestId: call.requestId,
      error: err instanceof Error ? err.message : String(err),
    });
  }

  /** The call's deadline in seconds: the API's, a mount's or the server's, shortened by the client's own. */
  private deadlineSeconds(call: Invocation): number {
    const server = call.api
      ? (call.api.timeout ?? this.options.timeout)
      : (call.ownTimeout ?? this.options.timeout);
    const client = call.clientTimeout;
    return client !== undefined && client < server ? client : server;
  }

  /** The call's deadline passed: mark it, abort its work, and say so. */
  private expire(call: Invocation): GatewayTimeout {
    const seconds = this.deadlineSeconds(call);
    call.timedOut = true;
    const error = new GatewayTimeout(`Not able to process the request in ${seconds} seconds`);
    call.abort.abort(error);
    return error;
  }

  /**
   * Decode, call the API function (alone, or in a batch), encode. The call is the API function's `Context`
   * (the HTTP exchange, or an `ApiCall` from gRPC or the task runner); it lives until the call closes (a
   * streamed answer may still use its temp dir). The answer itself when every step answered at once (a
   * descriptor with the body in hand, a function that returns a value), else a promise of it; a step's error
   * is thrown or rejected accordingly. Each step that answers at once costs no microtask turn.
   */
  invoke<Message, Answer>(
    api: InferenceApi,
    call: RuntimeCall,
    message: Message,
    codec: TransportCodec<Message, Answer>,
  ): Answer | Promise<Answer> {
    this.assertReady();
    // With a timeline (Server-Timing, tracing) each step is timed: `mark` is when the next one started.
    const timeline = call.trace;
    let mark = timeline ? performance.now() : 0;
    const input = codec.decode(message, call);
    // Only a batchable API has a batcher: no lookup for the others.
    const batcher = api.batching ? this.batchers.get(api.name) : undefined;
    if (isThenable(input) || batcher) return this.invokeLater(api, call, input, codec, batcher, mark);
    if (timeline) mark = timeline.step('decode', mark);
    // Only a recorded call runs the function inside its span (a closure); a timed one just calls it.
    const output: unknown = timeline?.recording
      ? timeline.run(() => api.fn(input as never, call))
      : api.fn(input as never, call);
    if (isThenable(output)) return this.encodeLater(output, call, codec, mark);
    if (timeline) mark = timeline.step('run', mark);
    return timeline ? timedEncode(timeline, codec.encode(output, call), mark) : codec.encode(output, call);
  }

  /** `invoke` from a step that did not answer at once on. */
  private async invokeLater<Answer>(
    api: InferenceApi,
    call: RuntimeCall,
    decoded: unknown,
    codec: TransportCodec<never, Answer>,
    batcher: Batcher | undefined,
    decodeStart: number,
  ): Promise<Answer> {
    const input = await decoded;
    const timeline = call.trace;
    let mark = timeline ? timeline.step('decode', decodeStart) : 0;
    // The batcher times the queue and the batch itself, for each of its callers.
    const result: unknown = batcher
      ? batcher.submit(input, call, call)
      : timeline?.recording
        ? timeline.run(() => api.fn(input as never, call))
        : api.fn(input as never, call);
    const output = isThenable(result) ? await result : result;
    if (timeline && !batcher) mark = timeline.step('run', mark);
    else if (timeline) mark = performance.now();
    // `return await`: returning the promise itself would cost an async function two more microtask turns.
    return await (timeline
      ? timedEncode(timeline, codec.encode(output, call), mark)
      : codec.encode(output, call));
  }

  private async encodeLater<Answer>(
    result: PromiseLike<unknown>,
    call: RuntimeCall,
    codec: TransportCodec<never, Answer>,
    runStart: number,
  ): Promise<Answer> {
    const output = await result;
    const timeline = call.trace;
    if (!timeline) return await codec.encode(output, call);
    return await timedEncode(timeline, codec.encode(output, call), timeline.step('run', runStart));
  }

  /** `invoke` as a promise whatever its steps did (a transport that needs one: the deadline race). */
  invokeAsPromise<Message, Answer>(
    api: InferenceApi,
    call: RuntimeCall,
    message: Message,
    codec: TransportCodec<Message, Answer>,
  ): Promise<Answer> {
    try {
      return Promise.resolve(this.invoke(api, call, message, codec));
    } catch (err) {
      return Promise.reject(err);
    }
  }

  /** The whole call for a transport without its own gate and deadline (gRPC): admit, deadline, invoke. */
  call<Message, Answer>(
    api: InferenceApi,
    call: RuntimeCall,
    message: Message,
    codec: TransportCodec<Message, Answer>,
  ): Promise<Answer> {
    // The deadline covers the wait for a slot too (docs/spec/io-descriptors.md §10.9).
    let admitted: ReturnType<Runtime['admitCall']>;
    try {
      admitted = this.admitCall(call);
    } catch (err) {
      return Promise.reject(err);
    }
    const work = isThenable(admitted)
      ? admitted.then(() => this.invokeAsPromise(api, call, message, codec))
      : this.invokeAsPromise(api, call, message, codec);
    return this.withDeadline(call, work);
  }
}

/** An encode's answer, its time counted on the call's timeline once it is there. */
function timedEncode<Answer>(
  timeline: CallTrace,
  answer: Answer | Promise<Answer>,
  start: number,
): Answer | Promise<Answer> {
  if (!isThenable(answer)) {
    timeline.step('encode', start);
    return answer;
  }
  return (answer as Promise<Answer>).then((value) => {
    timeline.step('encode', start);
    return value;
  });
}

/** Why a call's abort fired (its deadline's 504, its client gone), as the error its wait rejects with. */
function abortReason(call: Invocation): unknown {
  return call.abort.signal.reason;
}
