import { A1111Job, type A1111Snapshot } from './a1111-job.js';

/**
 * The A1111 jobs of each caller (`callerOf`: its client address and credentials), which `/progress` reports and
 * `/interrupt` and `/skip` stop: a caller sees and stops its own jobs only, never another's. Of a caller's jobs in
 * flight, its oldest is its current one (the generation queue is first in, first out). An entry lives while its
 * job does: the map holds the requests in flight, no more.
 */
export class A1111Progress {
  private readonly byCaller = new Map<string, A1111Job[]>();

  /** Starts following a request of `count` generations of `caller`; call `end` when the request is done. */
  begin(caller: string, count: number, request: AbortSignal): { job: A1111Job; end: () => void } {
    const job = new A1111Job(count, request);
    const jobs = this.byCaller.get(caller);
    if (jobs) jobs.push(job);
    else this.byCaller.set(caller, [job]);
    return {
      job,
      end: () => {
        job.end();
        const left = this.byCaller.get(caller)?.filter((j) => j !== job) ?? [];
        if (left.length > 0) this.byCaller.set(caller, left);
        else this.byCaller.delete(caller);
      },
    };
  }

  /** Stops the caller's current job at its next step; false when the caller has none. */
  interrupt(caller: string): boolean {
    const job = this.current(caller);
    job?.interrupt();
    return job !== undefined;
  }

  /** Skips the running generation of the caller's current job; false when the caller has none. */
  skip(caller: string): boolean {
    const job = this.current(caller);
    job?.skip();
    return job !== undefined;
  }

  /** The caller's current job as numbers, with its latest preview; null when the caller has none. */
  snapshot(caller: string): A1111Snapshot | null {
    return this.current(caller)?.snapshot() ?? null;
  }

  private current(caller: string): A1111Job | undefined {
    return this.byCaller.get(caller)?.[0];
  }
}
