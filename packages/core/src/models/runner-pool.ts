import { availableParallelism } from 'node:os';
import { type ResourceLimits, Worker } from 'node:worker_threads';
import { InvalidArgument, ServiceUnavailable } from '../errors/index.js';
import type { NamedTensors } from '../signature/named-tensors.js';
import { callerGone } from '../threads/caller-gone.js';
import { workerStart } from '../threads/worker-start.js';
import { endThreadCall, type ThreadCall, threadCall } from '../tracing/thread-span.js';
import { rebuildError } from './model-errors.js';
import type { ModelRunner } from './runner.js';
import { fromWire, toWire } from './wire-tensors.js';
import type { FromWorker, ToWorker, WireCall, WireOutcome, WorkerBoot } from './worker-protocol.js';

export interface RunnerPoolOptions {
  /** The model's name, for messages. */
  model: string;
  /**
   * The framework's worker module (a `.js` file, or `.ts` from source): it calls `serveRunnerInThread(loader)`.
   * Each instance is one worker thread running it.
   */
  workerModule: URL;
  /** Structured-cloneable start-up data handed to the loader of every instance. */
  init: unknown;
  /** Worker threads; default `defaultInstances()`. */
  instances?: number;
  /**
   * Most calls waiting for a free thread; one more is refused at once with 503 `RUNNER_QUEUE_FULL` and
   * `Retry-After`. Default `DEFAULT_MAX_QUEUED`.
   */
  maxQueued?: number;
  /**
   * Each thread's heap caps (`resourceLimits` of `new Worker`); default `DEFAULT_RUNNER_LIMITS`. A thread
   * that exceeds them dies alone and is replaced; the runtime's own native memory is not counted.
   */
  resourceLimits?: ResourceLimits;
  /**
   * Move input buffers to the worker instead of copying them (default false). The caller's typed arrays that
   * own their whole buffer are then detached: only for inputs used once (a request's tensors).
   */
  transferInputs?: boolean;
}

/** Instances by default: one per core, at most 4 (more threads than cores only add switching). */
export function defaultInstances(): number {
  return Math.max(1, Math.min(4, availableParallelism()));
}

interface Call {
  id: number;
  inputs: NamedTensors;
  resolve(outputs: NamedTensors): void;
  reject(err: Error): void;
  /** Settled already (its caller went away): a late answer from the thread is dropped. */
  done?: boolean;
  /** Stops listening to the caller's signal. */
  unlisten?: () => void;
  /** The caller's traced call, when a recording span was active: its `runner` span is made on the answer. */
  trace?: ThreadCall;
}

/** A runner thread's JavaScript heap by default: its inputs and outputs pass through it, its model does not. */
export const DEFAULT_RUNNER_LIMITS: ResourceLimits = { maxOldGenerationSizeMb: 2048 };

/** Threads that died and were started again within the last minute, at most: beyond, a crashing model stays down. */
const MAX_REPLACEMENTS_PER_MINUTE = 5;

/** Calls that may wait for a free runner thread by default: as many as the server lets in at once (`maxConcurrency`). */
export const DEFAULT_MAX_QUEUED = 128;

interface Instance {
  worker: Worker;
  /** The calls sent to this thread and not answered yet, by id. */
  current: Map<number, Call>;
}

/** The error a dropped call's caller gets: the signal's own reason (a timeout's 504) when it is an error. */
const gone = (signal: AbortSignal): Error => callerGone(signal, 'before the model ran its call');

/** Most waiting calls one free thread takes in one message. */
const MAX_BURST = 16;

/** Most milliseconds a runner thread gets to finish its call and free its runtime before it is terminated. */
const CLOSE_GRACE_MS = 10_000;

/**
 * Ask a thread to free its runtime and exit once its current call is done; terminate it if it does not. A
 * thread terminated in the middle of a native call can abort the whole process, hence the polite path first.
 */
function closeThread(worker: Worker): Promise<void> {
  return new Promise<void>((resolve) => {
    const timer = setTimeout(() => {
      worker
        .terminate()
        .catch(() => 0)
        .then(() => resolve());
    }, CLOSE_GRACE_MS);
    worker.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    worker.postMessage({ type: 'close' } satisfies ToWorker);
  });
}

/**
 * Runs a model in `instances` worker threads, so model calls never hold the event loop: the server keeps
 * reading requests and answering health checks while every instance is busy. A call goes to an idle instance,
 * else waits in arrival order for the first one to free up. A thread that frees up takes its share of the
 * waiting calls (at most `MAX_BURST`) in one message and answers them in few: under load a call then costs
 * the event loop a fraction of a message each way instead of two (see `serveRunnerInThread`).
 */
export class RunnerPool implements ModelRunner {
  private readonly idle: Instance[] = [];
  private readonly all: Instance[] = [];
  private readonly waiting: Call[] = [];
  private nextId = 1;
  private closed = false;
  private failure: Error | undefined;
  /** When recent replacements were started (ms), to stop a crash loop. */
  private readonly replaced: number[] = [];
  private target = 0;

  private constructor(private readonly options: RunnerPoolOptions) {}

  /** Start every instance and wait until each has loaded the model (the first failure is thrown). */
  static async start(options: RunnerPoolOptions): Promise<RunnerPool> {
    const count = options.instances ?? defaultInstances();
    if (!Number.isInteger(count) || count < 1)
      throw new InvalidArgument(`instances must be a positive integer, got ${String(count)}`);
    const pool = new RunnerPool(options);
    pool.target = count;
    const started = await Promise.allSettled(Array.from({ length: count }, () => pool.startOne()));
    const failed = started.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (failed) {
      await pool.close();
      throw failed.reason;
    }
    return pool;
  }

  /** Worker threads in the pool. */
  get instances(): number {
    return this.all.length;
  }

  /** Instances running a call now. */
  get busy(): number {
    return this.all.length - this.idle.length;
  }

  /** Calls waiting for an instance. */
  get queued(): number {
    return this.waiting.length;
  }

  private startOne(): Promise<void> {
    const { file, execArgv } = workerStart(this.options.workerModule);
    const boot: WorkerBoot = { entry: this.options.workerModule.href, init: this.options.init };
    const worker = new Worker(file, {
      workerData: boot,
      execArgv,
      resourceLimits: this.options.resourceLimits ?? DEFAULT_RUNNER_LIMITS,
    });
    const instance: Instance = { worker, current: new Map() };
    this.all.push(instance);
    return new Promise<void>((resolve, reject) => {
      let ready = false;
      // A thread that never got ready leaves the pool (and is stopped), so it is not counted as a runner.
      const failed = (err: Error) => {
        const at = this.all.indexOf(instance);
        if (at >= 0) this.all.splice(at, 1);
        worker.terminate().catch(() => 0);
        reject(err);
      };
      worker.on('message', (message: FromWorker) => {
        if (message.type === 'ready') {
          ready = true;
          this.release(instance);
          resolve();
        } else if (message.type === 'init-failed') failed(rebuildError(this.options.model, message.error));
        else this.settle(instance, message);
      });
      worker.on('error', (err) => {
        if (!ready) failed(err);
        else this.lose(instance, err);
      });
      worker.on('exit', (code) => {
        if (!ready)
          failed(
            new Error(
              `The runner thread of model '${this.options.model}' exited while loading (code ${code})`,
            ),
          );
        else this.lose(instance, new Error(`The runner thread exited (code ${code})`));
      });
    });
  }

  private settle(instance: Instance, message: FromWorker): void {
    if (message.type !== 'results' || instance.current.size === 0) return;
    for (const outcome of message.results) this.answer(instance, outcome);
    if (instance.current.size === 0) this.release(instance);
  }

  private answer(instance: Instance, outcome: WireOutcome): void {
    const call = instance.current.get(outcome.id);
    if (!call) return;
    instance.current.delete(outcome.id);
    call.unlisten?.();
    if (call.done) return;
    if ('outputs' in outcome) {
      if (call.trace) this.traced(call.trace, outcome.ms);
      call.resolve(fromWire(outcome.outputs));
    } else {
      const err = rebuildError(this.options.model, outcome.error);
      if (call.trace) this.traced(call.trace, outcome.ms, err);
      call.reject(err);
    }
  }

  /** A traced call's `runner` span: its time in the pool, its wait for a thread and the thread's own time. */
  private traced(trace: ThreadCall, runMs: number | undefined, error?: Error): void {
    endThreadCall(trace, 'runner', { 'tiffin.model': this.options.model }, runMs, error);
  }

  /** A thread died: its call fails, and the pool goes on with the others (or fails every call when none is left). */
  private lose(instance: Instance, err: Error): void {
    const at = this.all.indexOf(instance);
    if (at < 0) return;
    this.all.splice(at, 1);
    const idleAt = this.idle.indexOf(instance);
    if (idleAt >= 0) this.idle.splice(idleAt, 1);
    for (const call of instance.current.values()) {
      const lost = rebuildError(this.options.model, { message: err.message, type: 'Error' });
      if (call.trace) this.traced(call.trace, undefined, lost);
      call.reject(lost);
    }
    instance.current.clear();
    if (!this.closed) this.replace();
    this.failIfEmpty(err);
  }

  /** No thread is left, running or starting: every waiting call fails, and so does every new one. */
  private failIfEmpty(err: Error): void {
    if (this.all.length === 0 && !this.closed) {
      this.failure = new ServiceUnavailable(
        `Model '${this.options.model}' has no runner left: ${err.message}`,
      );
      for (const call of this.waiting.splice(0)) call.reject(this.failure);
    }
  }

  /**
   * Start a thread in place of a dead one (out of memory, a crash in the runtime), unless more than
   * `MAX_REPLACEMENTS_PER_MINUTE` were started in the last minute. Waiting calls wait for it.
   */
  private replace(): void {
    const now = performance.now();
    while (this.replaced.length > 0 && now - this.replaced[0]! > 60_000) this.replaced.shift();
    if (this.replaced.length >= MAX_REPLACEMENTS_PER_MINUTE || this.all.length >= this.target) return;
    this.replaced.push(now);
    // A thread that fails to start is taken out of the pool by `startOne`.
    this.startOne().catch((err: unknown) =>
      this.failIfEmpty(err instanceof Error ? err : new Error(String(err))),
    );
  }

  /** Why the pool cannot take calls now (no runner left), or null while at least one runs or is starting. */
  health(): string | null {
    if (this.closed) return `model '${this.options.model}' is closed`;
    if (this.all.length === 0) return `model '${this.options.model}' has no runner left`;
    return null;
  }

  /** A thread is free: it takes its share of the waiting calls, or waits for the next one. */
  private release(instance: Instance): void {
    const share = Math.min(MAX_BURST, Math.ceil(this.waiting.length / this.all.length));
    if (share > 0) this.send(instance, this.waiting.splice(0, share));
    else this.idle.push(instance);
  }

  private send(instance: Instance, calls: Call[]): void {
    const wire: WireCall[] = [];
    const moved = new Set<ArrayBuffer>();
    const now = calls.some((c) => c.trace) ? performance.now() : 0;
    for (const call of calls) {
      instance.current.set(call.id, call);
      if (call.trace) call.trace.sent = now;
      const input = toWire(call.inputs, this.options.transferInputs === true);
      for (const buffer of input.moved) moved.add(buffer);
      wire.push({ id: call.id, inputs: input.tensors });
    }
    try {
      instance.worker.postMessage({ type: 'run', calls: wire } satisfies ToWorker, [...moved]);
    } catch (err) {
      // Inputs that cannot cross to a thread (not cloneable): these calls fail, the thread stays free.
      for (const call of calls) call.reject(err instanceof Error ? err : new Error(String(err)));
      instance.current.clear();
      this.release(instance);
    }
  }

  run(inputs: NamedTensors, signal?: AbortSignal): Promise<NamedTensors> {
    if (this.closed) return Promise.reject(new ServiceUnavailable(`Model '${this.options.model}' is closed`));
    if (this.failure) return Promise.reject(this.failure);
    if (signal?.aborted) return Promise.reject(gone(signal));
    const instance = this.idle.pop();
    if (!instance && this.waiting.length >= (this.options.maxQueued ?? DEFAULT_MAX_QUEUED)) {
      return Promise.reject(
        new ServiceUnavailable(
          `Model '${this.options.model}' is overloaded: ${this.waiting.length} calls wait for a runner`,
          { code: 'RUNNER_QUEUE_FULL', headers: { 'retry-after': '1' } },
        ),
      );
    }
    return new Promise<NamedTensors>((resolve, reject) => {
      const call: Call = { id: this.nextId++, inputs, resolve, reject };
      const traced = threadCall();
      if (traced) call.trace = traced;
      if (signal) {
        const onAbort = () => this.drop(call, signal);
        signal.addEventListener('abort', onAbort, { once: true });
        call.unlisten = () => signal.removeEventListener('abort', onAbort);
      }
      if (instance) this.send(instance, [call]);
      else this.waiting.push(call);
    });
  }

  /**
   * The caller of `call` went away (left, or its deadline passed): it is answered now, and the call is taken
   * off the queue, or skipped by its thread if it has not started there. A run already under way finishes
   * (a native run cannot be stopped safely); its answer is dropped.
   */
  private drop(call: Call, signal: AbortSignal): void {
    if (call.done) return;
    call.done = true;
    call.unlisten?.();
    const at = this.waiting.indexOf(call);
    if (at >= 0) this.waiting.splice(at, 1);
    else {
      const instance = this.all.find((i) => i.current.has(call.id));
      instance?.worker.postMessage({ type: 'cancel', ids: [call.id] } satisfies ToWorker);
    }
    call.reject(gone(signal));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const gone = new ServiceUnavailable(`Model '${this.options.model}' is closed`);
    for (const call of this.waiting.splice(0)) call.reject(gone);
    await Promise.all(this.all.map((i) => closeThread(i.worker)));
    this.all.length = 0;
    this.idle.length = 0;
  }
}
