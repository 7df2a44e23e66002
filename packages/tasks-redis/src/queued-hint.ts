/**
 * Longest a claim answers null without asking Redis after one found the queue empty (a backstop: a job that
 * went back to the queue without a `queued` message is still found).
 */
const CLAIM_RECHECK_MS = 1000;

/**
 * Whether a claim may find a job: false after one found none, true again on a submit here, a `queued` message
 * from another process, or the periodic look for stalled jobs. A claim while false answers null without asking
 * Redis (the runner asks after every task it ends), for `CLAIM_RECHECK_MS` at most.
 */
export class QueuedHint {
  private maybeQueued = true;
  /** When a claim last asked Redis. */
  private askedAt = 0;
  /** Counts the times a job may have been queued: a reply that says none is left clears the hint only when unchanged. */
  private signals = 0;

  /** Whether a job may be waiting now (not whether a claim asks: `shouldAsk`). */
  get maybe(): boolean {
    return this.maybeQueued;
  }

  /** A job may be waiting to be claimed. */
  mayBeQueued(): void {
    this.maybeQueued = true;
    this.signals++;
  }

  /** Whether a claim asks Redis now; when it does, the hint is cleared before the look (`asking`). */
  shouldAsk(): boolean {
    return this.maybeQueued || performance.now() - this.askedAt >= CLAIM_RECHECK_MS;
  }

  /** A claim asks Redis: cleared before the look, so a submit that lands meanwhile sets it again. */
  asking(): void {
    this.askedAt = performance.now();
    this.maybeQueued = false;
  }

  /** A mark to pass to `noneLeft` once a reply counted the jobs left. */
  mark(): number {
    return this.signals;
  }

  /** A reply counted no job left: the next claim need not ask, unless a job may have been queued since `mark`. */
  noneLeft(mark: number): void {
    if (mark === this.signals) this.maybeQueued = false;
  }
}
