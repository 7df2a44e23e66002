import { InvalidArgument } from '../errors/index.js';
import type { Service } from '../service/service.js';
import type { TaskStore } from '../tasks/task-store.js';

/** How often the task queue's depth is read for readiness (a shared store: one bounded round trip). */
const POLL_MS = 2000;

/**
 * `/readyz` fails while more than `maxQueued` tasks wait to start (`readyMaxQueue`, `--ready-max-queue`), so a
 * load balancer sends new work to other replicas (docs/deploy.md). Readiness checks are synchronous: the depth
 * is read from the store every 2 s (a timer that keeps no process alive) and the check compares the last reading.
 * A store that cannot say its depth (no `stats`), or fails to, counts as not past the bound.
 */
export class QueueReadiness {
  private queued = 0;
  private readonly timer: ReturnType<typeof setInterval>;
  private reading = false;

  constructor(
    private readonly store: () => TaskStore,
    private readonly maxQueued: number,
  ) {
    this.timer = setInterval(() => this.read(), POLL_MS);
    this.timer.unref();
    this.read();
  }

  /** The readiness check: true, or why the replica is not ready (each probe also asks for a fresh reading). */
  readonly check = (): true | string => {
    this.read();
    return this.queued > this.maxQueued
      ? `${this.queued} tasks are waiting to start, more than --ready-max-queue ${this.maxQueued}`
      : true;
  };

  stop(): void {
    clearInterval(this.timer);
  }

  /** Ask the store for the depth now (one reading at a time). */
  read(): void {
    if (this.reading) return;
    const stats = this.store().stats;
    if (!stats) return;
    this.reading = true;
    stats
      .call(this.store())
      .then((now) => {
        this.queued = Object.values(now.unfinished).reduce((sum, counts) => sum + counts.queued, 0);
      })
      .catch(() => {
        this.queued = 0;
      })
      .finally(() => {
        this.reading = false;
      });
  }
}

/** Add the queue-depth readiness check to `service` (stopped at its shutdown); `maxQueued` checked. */
export function watchQueueDepth(service: Service, maxQueued: number): void {
  if (!Number.isInteger(maxQueued) || maxQueued < 0)
    throw new InvalidArgument(`readyMaxQueue must be a whole number >= 0, got ${String(maxQueued)}`);
  const readiness = new QueueReadiness(() => service.tasks, maxQueued);
  service.addReadinessCheck(readiness.check);
  service.onShutdown(() => readiness.stop());
}
