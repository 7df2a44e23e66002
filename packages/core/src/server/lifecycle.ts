import type { Service } from '../service/service.js';

/** Readiness and shutdown of one app: startup hooks before ready, drain before shutdown hooks. */
export class AppLifecycle {
  private ready = false;
  private draining = false;
  private inFlight = 0;
  private idleWaiters: Array<() => void> = [];
  private shutdownPromise: Promise<void> | undefined;
  /** Called once the app is ready, and once it begins to drain (the task runner starts and stops by them). */
  private readonly readyListeners: Array<() => void> = [];
  private readonly drainListeners: Array<() => void> = [];

  constructor(private readonly service: Service) {}

  /** Call `onReady` when the app becomes ready (startup hooks ran) and `onDrain` when it begins to drain. */
  watch(onReady: () => void, onDrain: () => void): void {
    this.readyListeners.push(onReady);
    this.drainListeners.push(onDrain);
    if (this.ready) onReady();
  }

  get isReady(): boolean {
    return this.ready && !this.draining;
  }

  /**
   * Why `/readyz` should answer 503, or `null` when ready: starting, draining, or a failing readiness check of
   * the service (`svc.addReadinessCheck`). API calls only wait for `isReady`.
   */
  notReadyReason(): string | null {
    if (!this.ready) return 'The service is starting';
    if (this.draining) return 'The service is shutting down';
    const reason = this.service.notReadyReason();
    return reason === null ? null : `The service is not ready: ${reason}`;
  }

  get isDraining(): boolean {
    return this.draining;
  }

  /** Requests whose handling has not finished. */
  get activeRequests(): number {
    return this.inFlight;
  }

  /** Run the service's startup hooks, then mark the app ready. */
  async startup(): Promise<void> {
    await this.service.startup();
    this.ready = true;
    for (const listener of this.readyListeners) listener();
  }

  /** Stop being ready (readyz → 503); in-flight requests continue. */
  beginDrain(): void {
    if (this.draining) return;
    this.draining = true;
    for (const listener of this.drainListeners) listener();
  }

  /**
   * Count a request until `requestEnded()` (once its response is fully sent or its connection closed: called
   * once per request, from its one 'close' listener). A pair of calls, not a closure per request.
   */
  requestStarted(): void {
    this.inFlight++;
  }

  requestEnded(): void {
    this.inFlight--;
    if (this.inFlight === 0 && this.idleWaiters.length > 0) {
      const waiters = this.idleWaiters;
      this.idleWaiters = [];
      for (const w of waiters) w();
    }
  }

  /** Resolves when no request is in flight (or after `timeoutMs`); true when drained. */
  waitForIdle(timeoutMs: number): Promise<boolean> {
    if (this.inFlight === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.idleWaiters = this.idleWaiters.filter((w) => w !== done);
        resolve(false);
      }, timeoutMs);
      const done = () => {
        clearTimeout(timer);
        resolve(true);
      };
      this.idleWaiters.push(done);
    });
  }

  /** Run the shutdown hooks once. */
  shutdown(): Promise<void> {
    this.beginDrain();
    this.shutdownPromise ??= this.service.shutdown();
    return this.shutdownPromise;
  }
}
