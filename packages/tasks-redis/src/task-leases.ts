import { TiffinError } from '@tiffin/core';
import type { Job } from 'bullmq';
import type { JobData } from './job-records.js';

/** A job this process runs: its lock's token and the heartbeat that renews it. */
export interface Lease {
  token: string;
  job: Job<JobData>;
  timer: NodeJS.Timeout;
  /** The bytes of the request's body its task counts (`HeldBytes`; 0 when none was kept apart). */
  bodyBytes: number;
}

/**
 * The jobs this process holds: the claims it runs, each under a lock it renews every third of the lease, and the
 * jobs BullMQ moved to active for it as it ended the one before (`handedOver`). A process that dies renews
 * nothing: its locks lapse and BullMQ's stalled-job check puts the jobs back in the queue.
 */
export class TaskLeases {
  private readonly leases = new Map<string, Lease>();
  /**
   * Jobs BullMQ moved to active for this process as it ended the one before (`fetchNext`: no round trip of
   * their own), under that one's lock token; the next claims take them first.
   */
  readonly handedOver: Array<{ job: Job<JobData>; token: string }> = [];

  constructor(
    private readonly leaseMs: number,
    private readonly closed: () => boolean,
  ) {}

  get(id: string): Lease | undefined {
    return this.leases.get(id);
  }

  has(id: string): boolean {
    return this.leases.has(id);
  }

  /** Run claimed job `id` under `token` (its body counted `bodyBytes`), its lock renewed until it is settled. */
  hold(id: string, job: Job<JobData>, token: string, bodyBytes: number): void {
    const timer = setInterval(
      // A third of the lease: two renewals may be lost (a slow Redis, a busy event loop) before it lapses.
      () => void job.extendLock(token, this.leaseMs).catch(() => {}),
      Math.floor(this.leaseMs / 3),
    );
    timer.unref();
    this.leases.set(id, { token, job, timer, bodyBytes });
  }

  /**
   * Settle a claimed task, retrying while Redis is away (up to a lease's time): an answer is not dropped for
   * a short outage. Past that the lease has lapsed and the task will run again elsewhere. Resolves whether
   * it was written.
   */
  async settle(id: string, write: () => Promise<unknown>): Promise<boolean> {
    const lease = this.leases.get(id);
    if (!lease) return false;
    clearInterval(lease.timer);
    this.leases.delete(id);
    const deadline = Date.now() + this.leaseMs;
    for (;;) {
      try {
        await write();
        break;
      } catch (err) {
        if (err instanceof TiffinError || Date.now() > deadline || this.closed()) return false;
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    }
    return true;
  }

  /**
   * Let every job go: back to the queue at once (`handBack`), or left to lapse as a killed process leaves them.
   * Resolves whether any went back.
   */
  async release(handBack: boolean): Promise<boolean> {
    const handedBack = handBack && this.leases.size + this.handedOver.length > 0;
    for (const { job, token } of this.handedOver.splice(0))
      if (handBack) await job.moveToWait(token).catch(() => {});
    for (const [id, lease] of this.leases) {
      clearInterval(lease.timer);
      if (handBack) await lease.job.moveToWait(lease.token).catch(() => {});
      this.leases.delete(id);
    }
    return handedBack;
  }
}
