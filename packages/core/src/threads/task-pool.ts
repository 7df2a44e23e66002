import { availableParallelism } from 'node:os';
import { type ResourceLimits, Worker } from 'node:worker_threads';
import { endThreadCall, type ThreadCall, threadCall } from '../tracing/thread-span.js';
import { callerGone } from './caller-gone.js';
import type { TaskAnswer, TaskBoot, TaskCall } from './task-protocol.js';
import { rebuildTiffinError } from './thread-errors.js';
import { workerStart } from './worker-start.js';

export interface TaskPoolOptions {
  /** What runs there, for messages (`'Parquet decoding'`). */
  name: string;
  /** The task module (`.js`, or `.ts` from source): it calls `serveTasksInThread({ ... })`. */
  module: URL;
  /** Most threads at once; default one per core but one, 1 to 4 (the event loop keeps a core). */
  threads?: number;
  /** Each thread's heap caps: a task that exceeds them fails alone, the process lives. */
  resourceLimits?: ResourceLimits;
}

interface Job {
  call: Omit<TaskCall, 'id'>;
  transfer: ArrayBuffer[];
  resolve: (value: unknown) => void;
  reject: (err: Error) => void;
  /** The caller's traced call, when a recording span was active: its `thread` span is made on the answer. */
  trace?: ThreadCall;
  /** Answered already: its caller went away (the thread's later answer is dropped). */
  done?: boolean;
}

/** Threads by default: cores minus one for the event loop, 1 to 4. */
function defaultThreads(): number {
  return Math.max(1, Math.min(4, availableParallelism() - 1));
}

/**
 * CPU-heavy work (decoding request bodies) off the event loop: a few threads on one task module, started on
 * first use and reused; calls wait in arrival order when all are busy. Idle threads do not keep the process
 * alive. A thread that dies (out of memory, a crash) fails its call only; the next call gets a fresh thread.
 */
export class TaskPool {
  private readonly idle: Worker[] = [];
  private readonly queue: Job[] = [];
  private readonly threads: number;
  private started = 0;
  private nextId = 1;

  constructor(private readonly options: TaskPoolOptions) {
    this.threads = options.threads ?? defaultThreads();
  }

  /** Start every thread now (their modules load off the event loop), rather than on first use. */
  start(): void {
    while (this.started < this.threads) this.idle.push(this.spawn());
  }

  /**
   * Run `task(...args)` in a thread; `transfer` lists buffers moved there instead of copied. When `signal` aborts
   * (the caller left, its deadline passed) the call is answered at once with its reason: a call still waiting is
   * taken off the queue, so nothing holds its buffers for an answer no one reads; one already in a thread runs
   * to its end there, and its answer is dropped.
   */
  run<T>(task: string, args: unknown[], transfer: ArrayBuffer[] = [], signal?: AbortSignal): Promise<T> {
    if (signal?.aborted) return Promise.reject(callerGone(signal, `before ${this.options.name} ran`));
    return new Promise<T>((resolve, reject) => {
      let unlisten: (() => void) | undefined;
      const job: Job = {
        call: { task, args },
        transfer,
        resolve: (value) => {
          unlisten?.();
          resolve(value as T);
        },
        reject: (err) => {
          unlisten?.();
          reject(err);
        },
      };
      const traced = threadCall();
      if (traced) job.trace = traced;
      if (signal) {
        const onAbort = () => {
          if (job.done) return;
          job.done = true;
          const at = this.queue.indexOf(job);
          if (at >= 0) this.queue.splice(at, 1);
          const err = callerGone(signal, `before ${this.options.name} ended`);
          if (job.trace) this.traced(job, undefined, err);
          reject(err);
        };
        signal.addEventListener('abort', onAbort, { once: true });
        unlisten = () => signal.removeEventListener('abort', onAbort);
      }
      this.queue.push(job);
      this.pump();
    });
  }

  private pump(): void {
    while (this.queue.length > 0) {
      const worker = this.idle.pop() ?? (this.started < this.threads ? this.spawn() : undefined);
      if (!worker) return;
      this.assign(worker, this.queue.shift()!);
    }
  }

  private spawn(): Worker {
    this.started++;
    const { file, execArgv } = workerStart(this.options.module);
    const boot: TaskBoot = { entry: this.options.module.href };
    const worker = new Worker(file, {
      workerData: boot,
      execArgv,
      ...(this.options.resourceLimits ? { resourceLimits: this.options.resourceLimits } : {}),
    });
    worker.unref();
    // Errors are answered through the call that was running (below); an idle thread's must not go unheard.
    worker.on('error', () => {});
    worker.on('exit', () => {
      this.started--;
      const at = this.idle.indexOf(worker);
      if (at >= 0) this.idle.splice(at, 1);
    });
    return worker;
  }

  private assign(worker: Worker, job: Job): void {
    const id = this.nextId++;
    if (job.trace) job.trace.sent = performance.now();
    worker.ref();
    const done = () => {
      worker.off('message', onMessage);
      worker.off('error', onError);
      worker.off('exit', onExit);
      worker.unref();
    };
    const onMessage = (answer: TaskAnswer) => {
      if (answer.id !== id) return;
      done();
      this.idle.push(worker);
      if (job.done) {
        this.pump();
        return;
      }
      job.done = true;
      if ('error' in answer) {
        const { error } = answer;
        const err =
          rebuildTiffinError(error) ?? Object.assign(new Error(error.message), { name: error.type });
        if (job.trace) this.traced(job, answer.ms, err);
        job.reject(err);
      } else {
        if (job.trace) this.traced(job, answer.ms);
        job.resolve(answer.value);
      }
      this.pump();
    };
    const fail = (why: string) => {
      done();
      if (job.done) {
        this.pump();
        return;
      }
      job.done = true;
      const err = new Error(`${this.options.name} stopped: ${why}`);
      if (job.trace) this.traced(job, undefined, err);
      job.reject(err);
      this.pump();
    };
    const onError = (err: Error) => fail(err.message);
    const onExit = (code: number) => fail(`its thread exited with code ${code}`);
    worker.on('message', onMessage);
    worker.once('error', onError);
    worker.once('exit', onExit);
    worker.postMessage({ id, ...job.call } satisfies TaskCall, job.transfer);
  }

  /** A traced call's `thread` span: its time in the pool, its wait for a thread and the thread's own time. */
  private traced(job: Job, runMs: number | undefined, error?: Error): void {
    const attributes = { 'tiffin.thread.pool': this.options.name, 'tiffin.thread.task': job.call.task };
    endThreadCall(job.trace as ThreadCall, 'thread', attributes, runMs, error);
  }
}
