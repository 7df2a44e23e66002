/** Runs remembered for the estimates: enough to follow a change of load, few enough to cost nothing. */
const KEPT = 32;
/** Runs measured before any estimate is made (before, the queue refuses nothing on time grounds). */
const MIN_RUNS = 4;

/**
 * The recent runs of one API's queue: when each ended and how long it ran, in a ring. Gives the shortest run
 * (the conservative bound of `ApiQueue`'s deadline check) and the rate calls leave the queue (`Retry-After`).
 */
export class RunRecord {
  private readonly durations = new Float64Array(KEPT);
  private readonly ends = new Float64Array(KEPT);
  private count = 0;

  /** A run from `start` to `end` (performance.now() times). */
  record(start: number, end: number): void {
    const at = this.count % KEPT;
    this.durations[at] = end - start;
    this.ends[at] = end;
    this.count++;
  }

  /** The shortest of the recent runs in milliseconds; undefined before `MIN_RUNS` runs. */
  get shortestMs(): number | undefined {
    const n = Math.min(this.count, KEPT);
    if (n < MIN_RUNS) return undefined;
    let shortest = Number.POSITIVE_INFINITY;
    for (let i = 0; i < n; i++) shortest = Math.min(shortest, this.durations[i] as number);
    return shortest;
  }

  /** Calls ended per second over the recent runs; undefined before `MIN_RUNS` runs or over no time at all. */
  get drainPerSecond(): number | undefined {
    const n = Math.min(this.count, KEPT);
    if (n < MIN_RUNS) return undefined;
    const newest = this.ends[(this.count - 1) % KEPT] as number;
    const oldest = this.ends[this.count < KEPT ? 0 : this.count % KEPT] as number;
    const span = newest - oldest;
    return span > 0 ? ((n - 1) * 1000) / span : undefined;
  }
}
