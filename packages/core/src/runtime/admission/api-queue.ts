import { ServiceUnavailable, TooManyRequests } from '../../errors/index.js';
import { clientShare } from '../../tasks/task-bounds.js';
import type { Invocation } from '../invocation.js';
import { DEFAULT_URGENCY, LOWEST_URGENCY } from './priority.js';
import type { QueueMetrics } from './queue-metrics.js';
import { RunRecord } from './run-record.js';

export interface ApiQueueOptions {
  /** Calls of the API that run at once. */
  concurrency: number;
  /** Calls that may wait for one of them; one more is refused with 503 `API_QUEUE_FULL`. */
  size: number;
  /** Calls one client may have waiting (default a quarter of `size`, as a task store's client share). */
  perClient?: number | undefined;
  /** `Retry-After` seconds before the queue has measured how fast it drains. */
  retryAfter: number;
  /** Milliseconds left before the call's deadline (its transport answers 504 when they run out). */
  remainingMs: (call: Invocation) => number;
}

/** A call waiting for a permit. */
interface Waiter {
  readonly call: Invocation;
  readonly urgency: number;
  readonly client: string | undefined;
  readonly since: number;
  readonly resolve: (release: () => void) => void;
  readonly reject: (err: unknown) => void;
  done: boolean;
  stopListening?: () => void;
}

/**
 * One API's calls (docs/spec/io-descriptors.md §10.9): at most `concurrency` at once; the others wait, at most
 * `size` of them, in order of urgency (RFC 9218 `u`, 0 first) and then of arrival, a client holding at most its
 * share. A waiting call leaves the queue when its call is aborted (its deadline passed: the transport answers
 * 504; its client went away) and never runs. A task's run waits without bound or share: it already waited its
 * turn in the task store.
 */
export class ApiQueue {
  private running = 0;
  /** One FIFO per urgency level; `heads[u]` is the index of the oldest live entry of `levels[u]`. */
  private readonly levels: Waiter[][] = Array.from({ length: LOWEST_URGENCY + 1 }, () => []);
  private readonly heads: number[] = new Array(LOWEST_URGENCY + 1).fill(0);
  private waiting = 0;
  /** Live (not yet left) waiting calls per urgency level. */
  private readonly live: number[] = new Array(LOWEST_URGENCY + 1).fill(0);
  /** Entries of calls that left (deadline, client gone) still in their level, behind its head. */
  private readonly dead: number[] = new Array(LOWEST_URGENCY + 1).fill(0);
  private readonly perClient = new Map<string, number>();
  private readonly share: number;
  /** Start times (performance.now()) of the calls running now. */
  private readonly starts = new Set<{ at: number }>();
  private readonly runs = new RunRecord();

  constructor(
    readonly api: string,
    private readonly options: ApiQueueOptions,
    private readonly metrics?: QueueMetrics,
  ) {
    this.share = clientShare(options.size, options.perClient);
    metrics?.track(api, this);
  }

  /** Calls waiting now. */
  get depth(): number {
    return this.waiting;
  }

  /** Seconds the oldest waiting call has waited (0 when none waits). */
  get oldestSeconds(): number {
    let oldest = Number.POSITIVE_INFINITY;
    for (let u = 0; u <= LOWEST_URGENCY; u++) {
      const head = this.liveHead(u);
      if (head && head.since < oldest) oldest = head.since;
    }
    return oldest === Number.POSITIVE_INFINITY ? 0 : (performance.now() - oldest) / 1000;
  }

  /**
   * A permit for `call`: its release at once when one is free and nobody waits, else the promise of it. Throws
   * the 503 past the bound, the 429 past the client's share, and the 503 `DEADLINE_UNREACHABLE` when the call
   * could not start before its deadline even if every call ahead ran as fast as any has.
   */
  enter(call: Invocation): (() => void) | Promise<() => void> {
    if (this.running < this.options.concurrency && this.waiting === 0) return this.start(call, undefined);
    const urgency = call.urgency ?? DEFAULT_URGENCY;
    const task = call.task !== undefined;
    const client = task ? undefined : call.client;
    if (!task) this.admissible(call, urgency, client);
    return new Promise<() => void>((resolve, reject) => {
      const waiter: Waiter = {
        call,
        urgency,
        client,
        since: performance.now(),
        resolve,
        reject,
        done: false,
      };
      this.levels[urgency]?.push(waiter);
      this.waiting++;
      this.live[urgency] = (this.live[urgency] as number) + 1;
      if (client !== undefined) this.perClient.set(client, (this.perClient.get(client) ?? 0) + 1);
      const signal = call.abort.signal;
      const onAbort = () => this.leave(waiter, signal.reason);
      signal.addEventListener('abort', onAbort, { once: true });
      waiter.stopListening = () => signal.removeEventListener('abort', onAbort);
      if (signal.aborted) onAbort();
    });
  }

  /** Throw when `call` may not wait: the queue full, its client's share taken, its deadline out of reach. */
  private admissible(call: Invocation, urgency: number, client: string | undefined): void {
    if (this.waiting >= this.options.size) {
      this.metrics?.refused(this.api, 'full');
      throw new ServiceUnavailable(
        `API ${this.api} has ${this.waiting} calls waiting, as many as it holds; retry later`,
        { code: 'API_QUEUE_FULL', headers: { 'retry-after': String(this.retryAfter()) } },
      );
    }
    if (client !== undefined && (this.perClient.get(client) ?? 0) >= this.share) {
      this.metrics?.refused(this.api, 'client');
      throw new TooManyRequests(
        `You have ${this.share} calls waiting for API ${this.api}; retry when one has run`,
        { code: 'API_QUEUE_CLIENT_FULL', headers: { 'retry-after': String(this.retryAfter()) } },
      );
    }
    const earliest = this.earliestStartMs(urgency);
    if (earliest !== undefined && earliest > this.options.remainingMs(call)) {
      this.metrics?.refused(this.api, 'deadline');
      throw new ServiceUnavailable(
        `API ${this.api} cannot start this call before its deadline: the calls ahead of it take longer`,
        { code: 'DEADLINE_UNREACHABLE', headers: { 'retry-after': String(this.retryAfter()) } },
      );
    }
  }

  /**
   * A lower bound of the milliseconds before a call of `urgency` could start, or undefined before the queue
   * has measured enough runs. Every call runs at least the shortest run measured (`m`); no slot frees before
   * its running call has run `m`, the soonest of them in `f`; then `k` calls ahead of this one need at least
   * floor(k / concurrency) more rounds of `m` before a slot is left for it: f + floor(k / c) * m.
   */
  private earliestStartMs(urgency: number): number | undefined {
    const shortest = this.runs.shortestMs;
    if (shortest === undefined) return undefined;
    let ahead = 0;
    for (let u = 0; u <= urgency; u++) ahead += this.live[u] as number;
    const now = performance.now();
    let soonestFree = Number.POSITIVE_INFINITY;
    for (const { at } of this.starts) soonestFree = Math.min(soonestFree, Math.max(0, at + shortest - now));
    if (soonestFree === Number.POSITIVE_INFINITY) soonestFree = 0;
    return soonestFree + Math.floor(ahead / this.options.concurrency) * shortest;
  }

  /** `Retry-After` seconds: the time the queue takes to drain at its measured rate, 1 to 600. */
  private retryAfter(): number {
    const perSecond = this.runs.drainPerSecond;
    if (perSecond === undefined) return this.options.retryAfter;
    return Math.min(600, Math.max(1, Math.ceil((this.waiting + 1) / perSecond)));
  }

  /** Take a slot for `call`; its release hands the slot to the next waiting call. */
  private start(call: Invocation, waitedSince: number | undefined): () => void {
    this.running++;
    const now = performance.now();
    if (waitedSince !== undefined) {
      this.metrics?.waited(this.api, (now - waitedSince) / 1000);
      call.trace?.add('queue', waitedSince, now);
    }
    const slot = { at: now };
    this.starts.add(slot);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.starts.delete(slot);
      this.runs.record(slot.at, performance.now());
      this.running--;
      this.next();
    };
  }

  /** Hand free slots to the most urgent, oldest waiting calls. */
  private next(): void {
    while (this.running < this.options.concurrency && this.waiting > 0) {
      const waiter = this.shift();
      if (!waiter) return;
      waiter.resolve(this.start(waiter.call, waiter.since));
    }
  }

  /** The most urgent, oldest waiting call, taken out of the queue. */
  private shift(): Waiter | undefined {
    for (let u = 0; u <= LOWEST_URGENCY; u++) {
      const waiter = this.liveHead(u);
      if (!waiter) continue;
      this.heads[u] = (this.heads[u] as number) + 1;
      this.compact(u);
      this.settle(waiter);
      return waiter;
    }
    return undefined;
  }

  /** A waiting call that leaves before its turn (aborted: deadline or client gone): it never runs. */
  private leave(waiter: Waiter, reason: unknown): void {
    if (waiter.done) return;
    this.settle(waiter);
    waiter.reject(reason);
    // Its entry stays in its level as a dead one, skipped when the head reaches it; a level whose head does not
    // move (a less urgent one, under load) drops its dead entries once they outnumber the live ones.
    const u = waiter.urgency;
    this.dead[u] = (this.dead[u] as number) + 1;
    if ((this.dead[u] as number) > 64 && (this.dead[u] as number) > (this.live[u] as number)) {
      const level = this.levels[u] as Waiter[];
      this.levels[u] = level.slice(this.heads[u]).filter((w) => !w.done);
      this.heads[u] = 0;
      this.dead[u] = 0;
    }
  }

  private settle(waiter: Waiter): void {
    waiter.done = true;
    waiter.stopListening?.();
    this.waiting--;
    this.live[waiter.urgency] = (this.live[waiter.urgency] as number) - 1;
    const client = waiter.client;
    if (client !== undefined) {
      const held = (this.perClient.get(client) ?? 1) - 1;
      if (held <= 0) this.perClient.delete(client);
      else this.perClient.set(client, held);
    }
  }

  /** The oldest live entry of level `u` (dead ones, calls that left, are dropped on the way). */
  private liveHead(u: number): Waiter | undefined {
    const level = this.levels[u] as Waiter[];
    let head = this.heads[u] as number;
    while (head < level.length && (level[head] as Waiter).done) {
      head++;
      this.dead[u] = Math.max(0, (this.dead[u] as number) - 1);
    }
    this.heads[u] = head;
    this.compact(u);
    return level[this.heads[u] as number];
  }

  /** Drop the consumed front of level `u` once it is most of the array (amortised O(1) per call). */
  private compact(u: number): void {
    const level = this.levels[u] as Waiter[];
    const head = this.heads[u] as number;
    if (head === level.length) {
      level.length = 0;
      this.heads[u] = 0;
    } else if (head > 64 && head * 2 > level.length) {
      level.splice(0, head);
      this.heads[u] = 0;
    }
  }
}
