import { ServiceUnavailable } from '@tiffin/core';
import { GenerationCancelled } from '../pipeline/cancel.js';
import { type JobCost, StepClock } from './step-clock.js';

/** The queue is full: 503 with a `Retry-After` estimated from the measured work ahead. */
export class QueueFullError extends ServiceUnavailable {
  static override readonly code: string = 'QUEUE_FULL';
  constructor(readonly retryAfterSeconds: number) {
    super('The image generation queue is full; retry later', {
      headers: { 'retry-after': String(retryAfterSeconds) },
    });
  }
}

const CANCELLED_WAITING = 'The request was cancelled before generation started';

/**
 * Who a generation is for, which sets its place in the queue: `request`, a client waiting on its connection (the
 * native APIs, the OpenAI and A1111 layers), or `task`, a submitted job the task runner claimed from the service's
 * task store.
 */
export type GenerationOrigin = 'request' | 'task';

/**
 * The queue's policy per origin. A task already waited its turn in the task store (which bounds tasks and runs them
 * one at a time), so it neither waits a second time behind the requests queued meanwhile (`rank`: lower goes first)
 * nor is refused by the bound (its client is not there to retry a 503). Requests and claimed tasks alternate: a
 * freed worker takes the waiting request before the task runner has claimed the next task.
 */
export const ORIGIN_POLICY: Readonly<Record<GenerationOrigin, { rank: number; bounded: boolean }>> = {
  task: { rank: 0, bounded: false },
  request: { rank: 1, bounded: true },
};

/** The running job's handle: its step reports feed the step clock and the queue's estimates. */
export interface RunningJob {
  readonly cost: JobCost;
  /** Call after each finished denoising step (1-based). */
  stepDone(step: number): void;
}

interface Entry {
  cost: JobCost;
  stepsDone: number;
}

interface Waiting<T> extends Entry {
  rank: number;
  run: (job: RunningJob) => Promise<T>;
  resolve: (value: T) => void;
  reject: (err: unknown) => void;
  signal: AbortSignal | undefined;
  onAbort: () => void;
}

/** Cost of a job that said nothing about itself (one step of one unit). */
const UNKNOWN_COST: JobCost = { steps: 1, unitsPerStep: 1 };

/**
 * A bounded queue in front of the one model worker: at most `concurrency` jobs run, at most `maxWaiting` requests
 * wait; past that a request is refused at once (→ 503 + Retry-After from the step clock). Waiting jobs go by their
 * origin's rank (`ORIGIN_POLICY`), then first in, first out. A waiting job whose client disconnected is dropped
 * without running.
 */
export class GenerationQueue {
  private readonly running = new Set<Entry>();
  private readonly waiting: Array<Waiting<unknown>> = [];

  constructor(
    private readonly maxWaiting: number,
    private readonly concurrency = 1,
    /** Measured speed; the service seeds it with the model's warm-up. */
    readonly clock = new StepClock(),
  ) {}

  get size(): { running: number; waiting: number } {
    return { running: this.running.size, waiting: this.waiting.length };
  }

  /** Estimated seconds until a job submitted now would start. */
  secondsAhead(): number {
    let seconds = 0;
    for (const e of this.running) seconds += this.clock.remainingSeconds(e.cost, e.stepsDone);
    for (const e of this.waiting) seconds += this.clock.remainingSeconds(e.cost);
    return seconds / this.concurrency;
  }

  /** The 503 a job submitted now would get (with its Retry-After), or null when it would be taken. */
  refusal(): QueueFullError | null {
    if (this.running.size < this.concurrency || this.waiting.length < this.maxWaiting) return null;
    return new QueueFullError(Math.max(1, Math.ceil(this.secondsAhead())));
  }

  /** How many jobs a job of `origin` submitted now would have ahead of it (running ones included). */
  ahead(origin: GenerationOrigin = 'request'): number {
    const { rank } = ORIGIN_POLICY[origin];
    return this.running.size + this.waiting.filter((e) => e.rank <= rank).length;
  }

  submit<T>(
    run: (job: RunningJob) => Promise<T>,
    options: { signal?: AbortSignal; cost?: JobCost; origin?: GenerationOrigin } = {},
  ): Promise<T> {
    const { signal } = options;
    const cost = options.cost ?? UNKNOWN_COST;
    const policy = ORIGIN_POLICY[options.origin ?? 'request'];
    if (signal?.aborted) return Promise.reject(new GenerationCancelled(CANCELLED_WAITING));
    if (this.running.size < this.concurrency) return this.start(run, cost);
    const refusal = policy.bounded ? this.refusal() : null;
    if (refusal) return Promise.reject(refusal);
    return new Promise<T>((resolve, reject) => {
      const entry: Waiting<T> = {
        rank: policy.rank,
        run,
        cost,
        stepsDone: 0,
        resolve,
        reject,
        signal,
        onAbort: () => {
          const i = this.waiting.indexOf(entry as Waiting<unknown>);
          if (i >= 0) {
            this.waiting.splice(i, 1);
            reject(new GenerationCancelled(CANCELLED_WAITING));
          }
        },
      };
      signal?.addEventListener('abort', entry.onAbort, { once: true });
      // Behind every job of its rank or a lower one, ahead of the rest.
      const behind = this.waiting.findIndex((e) => e.rank > entry.rank);
      this.waiting.splice(behind < 0 ? this.waiting.length : behind, 0, entry as Waiting<unknown>);
    });
  }

  private async start<T>(run: (job: RunningJob) => Promise<T>, cost: JobCost): Promise<T> {
    const entry: Entry = { cost, stepsDone: 0 };
    this.running.add(entry);
    const started = performance.now();
    let last = started;
    const job: RunningJob = {
      cost,
      stepDone: (step) => {
        const now = performance.now();
        // The first step also carries the prompt encoding: only later steps measure the UNet alone.
        if (entry.stepsDone > 0 && step > entry.stepsDone)
          this.clock.recordStep(cost.unitsPerStep, (now - last) / 1000 / (step - entry.stepsDone));
        entry.stepsDone = step;
        last = now;
      },
    };
    let finished = false;
    try {
      const value = await run(job);
      finished = true;
      return value;
    } finally {
      if (finished) this.clock.recordJob(cost, (performance.now() - started) / 1000);
      this.running.delete(entry);
      this.next();
    }
  }

  private next(): void {
    const entry = this.waiting.shift();
    if (!entry) return;
    entry.signal?.removeEventListener('abort', entry.onAbort);
    this.start(entry.run, entry.cost).then(entry.resolve, entry.reject);
  }
}
