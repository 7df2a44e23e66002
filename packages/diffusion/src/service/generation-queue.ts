/** The queue is full: the client should retry after `retryAfterSeconds`. */
export class QueueFullError extends Error {
  constructor(readonly retryAfterSeconds: number) {
    super('The image generation queue is full; retry later');
  }
}

/** The client went away before its job started. */
export class JobAbortedError extends Error {
  constructor() {
    super('The request was cancelled before generation started');
  }
}

interface Waiting<T> {
  run: () => Promise<T>;
  resolve: (value: T) => void;
  reject: (err: unknown) => void;
  signal: AbortSignal | undefined;
  onAbort: () => void;
}

/**
 * A bounded FIFO in front of the one model worker: at most `concurrency` jobs run, at most `maxWaiting`
 * wait; past that a job is refused at once (→ 503 + Retry-After). A waiting job whose client
 * disconnected is dropped without running.
 */
export class GenerationQueue {
  private running = 0;
  private readonly waiting: Array<Waiting<unknown>> = [];
  /** Moving average of job seconds, for Retry-After. */
  private averageSeconds = 10;

  constructor(
    private readonly maxWaiting: number,
    private readonly concurrency = 1,
  ) {}

  get size(): { running: number; waiting: number } {
    return { running: this.running, waiting: this.waiting.length };
  }

  submit<T>(run: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    if (signal?.aborted) return Promise.reject(new JobAbortedError());
    if (this.running < this.concurrency) return this.start(run);
    if (this.waiting.length >= this.maxWaiting) {
      const ahead = this.waiting.length + this.running;
      return Promise.reject(
        new QueueFullError(Math.max(1, Math.ceil((ahead * this.averageSeconds) / this.concurrency))),
      );
    }
    return new Promise<T>((resolve, reject) => {
      const entry: Waiting<T> = {
        run,
        resolve,
        reject,
        signal,
        onAbort: () => {
          const i = this.waiting.indexOf(entry as Waiting<unknown>);
          if (i >= 0) {
            this.waiting.splice(i, 1);
            reject(new JobAbortedError());
          }
        },
      };
      signal?.addEventListener('abort', entry.onAbort, { once: true });
      this.waiting.push(entry as Waiting<unknown>);
    });
  }

  private async start<T>(run: () => Promise<T>): Promise<T> {
    this.running++;
    const started = performance.now();
    try {
      return await run();
    } finally {
      const seconds = (performance.now() - started) / 1000;
      this.averageSeconds = this.averageSeconds * 0.7 + seconds * 0.3;
      this.running--;
      this.next();
    }
  }

  private next(): void {
    const entry = this.waiting.shift();
    if (!entry) return;
    entry.signal?.removeEventListener('abort', entry.onAbort);
    this.start(entry.run).then(entry.resolve, entry.reject);
  }
}
