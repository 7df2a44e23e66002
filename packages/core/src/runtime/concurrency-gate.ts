import { ServiceUnavailable } from '../errors/index.js';

/** Paths that must answer even when the server is saturated (docs/spec/io-descriptors.md D5). */
export const UNLIMITED_PATHS: ReadonlySet<string> = new Set([
  '/livez',
  '/healthz',
  '/readyz',
  '/metrics',
  '/v2/health/live',
  '/v2/health/ready',
]);

/**
 * At most `max` requests at once (health paths excluded); one more is refused at once with 503 and
 * `Retry-After` (docs/spec/io-descriptors.md D5), never queued. A permit is held until the response is fully sent.
 */
export class ConcurrencyGate {
  private inFlight = 0;
  /** Who waits for a permit (`whenFree`): background work, never a request. */
  private readonly waiting: Array<() => void> = [];

  constructor(
    readonly max: number,
    readonly retryAfterSeconds: number,
    /** What is counted, for the 503's message. */
    private readonly what = 'requests',
  ) {}

  /** Take a permit, or throw the 503; the returned release may be called more than once. */
  enter(): () => void {
    if (this.inFlight >= this.max) {
      throw new ServiceUnavailable(`Too many ${this.what}: the server is handling its limit of ${this.max}`, {
        headers: { 'retry-after': String(this.retryAfterSeconds) },
      });
    }
    this.inFlight++;
    let released = false;
    return () => {
      if (!released) {
        released = true;
        this.inFlight--;
        if (this.waiting.length > 0) this.waiting.shift()!();
      }
    };
  }

  /**
   * Resolves when a permit may be free (then `enter` again: a request may have taken it first). For work
   * that waits its turn instead of being refused, such as a task whose client is not waiting on the answer.
   */
  whenFree(): Promise<void> {
    if (this.inFlight < this.max) return Promise.resolve();
    return new Promise((resolve) => this.waiting.push(resolve));
  }
}
