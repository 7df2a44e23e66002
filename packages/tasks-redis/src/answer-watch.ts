/**
 * Whether Redis answers in time, for readiness (`notReadyReason`, hence `/readyz`): one `PING` at a time, every
 * `everyMs`, and a reason to report while the one in flight has waited longer than `withinMs` or the last one
 * failed. Reading it is a field read, so a probe never waits on Redis; a Redis that hangs rather than refuses
 * (paused, frozen, its host gone without a reset) is reported within `everyMs + withinMs` of the hang.
 */
export class AnswerWatch {
  /** When the ping in flight was sent (`performance.now()`), or null when none is. */
  private sentAt: number | null = null;
  private failed = false;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly ping: () => Promise<unknown>,
    private readonly everyMs: number,
    private readonly withinMs: number,
  ) {}

  start(): void {
    this.send();
    this.timer = setInterval(() => this.send(), this.everyMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** Why Redis does not answer in time now, or null while it does. */
  reason(): string | null {
    if (this.sentAt !== null && performance.now() - this.sentAt > this.withinMs)
      return `Redis (the task store) has not answered within ${this.withinMs} ms`;
    return this.failed ? 'Redis (the task store) did not answer its last check' : null;
  }

  private send(): void {
    // One in flight at most: a hung Redis is not sent a ping a second.
    if (this.sentAt !== null) return;
    const at = performance.now();
    this.sentAt = at;
    this.ping().then(
      () => this.answered(at, false),
      () => this.answered(at, true),
    );
  }

  private answered(at: number, failed: boolean): void {
    if (this.sentAt !== at) return;
    this.sentAt = null;
    this.failed = failed;
  }
}
