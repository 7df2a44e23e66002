/** What a deadline wait resolves to: the work finished, or the deadline passed first. */
export type DeadlineOutcome = 'done' | 'expired';

/** What `Deadlines.race` resolves to when the deadline passed before the work finished. */
export const EXPIRED: unique symbol = Symbol('deadline expired');

/** A deadline being watched (`Deadlines.watch`): hand it to `Deadlines.clear` once the work finished. */
export interface DeadlineWatch {
  /** When it passes (a performance.now() reading). */
  readonly due: number;
}

interface Waiter extends DeadlineWatch {
  /** Called when the deadline passes first; null once cleared or fired. */
  expire: (() => void) | null;
  /** The queue of its duration (a cleared waiter moves its head). */
  readonly queue: Queue;
  /** The waiter that took its place when its deadline was moved (`Deadlines.move`). */
  movedTo: Waiter | undefined;
}

/** Waiters of one duration, in start order (hence in due order); `head` skips the settled ones. */
interface Queue {
  items: Waiter[];
  head: number;
  /** Filter settled waiters out when this many are held (settled ones behind a slow head included). */
  compactAt: number;
}

const MIN_COMPACT_AT = 4096;

/** The resolving functions of the promise `captureBoth` last made (Node 20 has no `Promise.withResolvers`). */
let capturedResolve: ((value: never) => void) | undefined;
let capturedReject: ((err: unknown) => void) | undefined;

/** A promise executor shared by every race: a deadline makes no executor closure of its own. */
function captureBoth(resolve: (value: never) => void, reject: (err: unknown) => void): void {
  capturedResolve = resolve;
  capturedReject = reject;
}

/**
 * Per-request deadlines without a timer per request: waiters with the same duration expire in the order they
 * started, so one FIFO per duration and a single timer armed for the earliest due time are enough. Clearing a
 * waiter moves its queue's head past settled ones (no timer to cancel).
 */
export class Deadlines {
  private readonly queues = new Map<number, Queue>();
  private timer: NodeJS.Timeout | undefined;
  private timerDue = Number.POSITIVE_INFINITY;

  /**
   * Wait for `work`, at most `seconds` after `startedAt` (a performance.now() reading; no limit when `seconds`
   * is not a positive finite number). On 'expired' the work keeps running: the caller decides what to do with it.
   */
  wait(
    work: Promise<unknown>,
    seconds: number,
    startedAt: number = performance.now(),
  ): Promise<DeadlineOutcome> {
    return this.race(work, seconds, startedAt).then((v) => (v === EXPIRED ? 'expired' : 'done'));
  }

  /**
   * `wait` that resolves with the work's own value (or `EXPIRED`); `holder.deadlineWatch` is set to its watch,
   * for a caller that may `move` the deadline while the work runs.
   */
  race<T>(
    work: Promise<T>,
    seconds: number,
    startedAt: number = performance.now(),
    holder?: { deadlineWatch?: DeadlineWatch | undefined },
  ): Promise<T | typeof EXPIRED> {
    if (!(seconds > 0) || !Number.isFinite(seconds)) return work;
    const outcome = new Promise<T | typeof EXPIRED>(captureBoth);
    const resolve = capturedResolve as (value: T | typeof EXPIRED) => void;
    const reject = capturedReject as (err: unknown) => void;
    const watch = this.watch(seconds, startedAt, () => resolve(EXPIRED)) as DeadlineWatch;
    if (holder) holder.deadlineWatch = watch;
    work.then(
      (value) => {
        this.clear(watch);
        resolve(value);
      },
      (err: unknown) => {
        this.clear(watch);
        reject(err);
      },
    );
    return outcome;
  }

  /**
   * Call `expire` once `seconds` after `startedAt` have passed, unless `clear` came first: the callback form,
   * for a caller that settles the work itself (the HTTP pipeline: no promise of its own per request).
   * Undefined when `seconds` is not a positive finite number (no deadline).
   */
  watch(seconds: number, startedAt: number, expire: () => void): DeadlineWatch | undefined {
    if (!(seconds > 0) || !Number.isFinite(seconds)) return undefined;
    const ms = Math.max(1, Math.round(seconds * 1000));
    let queue = this.queues.get(ms);
    if (!queue) {
      queue = { items: [], head: 0, compactAt: MIN_COMPACT_AT };
      this.queues.set(ms, queue);
    }
    if (queue.items.length - queue.head >= queue.compactAt) compact(queue);
    const waiter: Waiter = { due: startedAt + ms, expire, queue, movedTo: undefined };
    queue.items.push(waiter);
    if (waiter.due < this.timerDue) this.arm(waiter.due);
    return waiter;
  }

  /**
   * Make a watched deadline `seconds` after `startedAt` instead (a mounted route's own `timeout`, as the request
   * enters its mount): the same `expire` is called then, and `watch` stays the handle to clear. Nothing happens
   * once it fired or was cleared, or when `seconds` is no positive finite number (the deadline stays).
   */
  move(watch: DeadlineWatch, seconds: number, startedAt: number): void {
    if (!(seconds > 0) || !Number.isFinite(seconds)) return;
    const old = live(watch as Waiter);
    const expire = old.expire;
    if (expire === null) return;
    if (old.due === startedAt + Math.max(1, Math.round(seconds * 1000))) return;
    const moved = this.watch(seconds, startedAt, expire) as Waiter;
    this.clear(old);
    old.movedTo = moved;
    // Pushed last, yet it may be due before waiters that started after its request: keep the queue in due order.
    const items = moved.queue.items;
    let at = items.length - 1;
    while (at > moved.queue.head && items[at - 1]!.due > moved.due) {
      items[at] = items[at - 1]!;
      at--;
    }
    items[at] = moved;
  }

  /** Stop watching (the work finished); nothing happens once it fired. */
  clear(watch: DeadlineWatch): void {
    const waiter = live(watch as Waiter);
    if (waiter.expire === null) return;
    waiter.expire = null;
    const queue = waiter.queue;
    const items = queue.items;
    let head = queue.head;
    while (head < items.length && items[head]!.expire === null) head++;
    if (head === items.length) {
      // Empty: kept for the next request of this duration (one call at a time would otherwise add and remove
      // a queue per request); the sweep drops the queues it finds empty. Its array is replaced only once it
      // grew (setting an array's length is a runtime call: not one per request).
      if (head >= 1024) {
        queue.items = [];
        queue.head = 0;
      } else queue.head = head;
      return;
    }
    // Drop the settled prefix now and then so memory follows the requests in flight, not those served.
    if (head >= 1024 && head * 2 >= items.length) {
      items.splice(0, head);
      head = 0;
    }
    queue.head = head;
  }

  /** Waiters whose work is still running before its deadline (tests, diagnostics). */
  get pending(): number {
    let n = 0;
    for (const queue of this.queues.values()) {
      for (let i = queue.head; i < queue.items.length; i++) if (queue.items[i]!.expire) n++;
    }
    return n;
  }

  /** Waiters held in memory, settled ones not yet dropped included (tests: memory follows load). */
  get retained(): number {
    let n = 0;
    for (const queue of this.queues.values()) n += queue.items.length - queue.head;
    return n;
  }

  private arm(due: number): void {
    clearTimeout(this.timer);
    this.timerDue = due;
    this.timer = setTimeout(() => this.sweep(), Math.max(0, due - performance.now()));
    // Deadlines alone must not keep the process alive.
    this.timer.unref();
  }

  private sweep(): void {
    this.timer = undefined;
    this.timerDue = Number.POSITIVE_INFINITY;
    const now = performance.now();
    let next = Number.POSITIVE_INFINITY;
    for (const [ms, queue] of this.queues) {
      const items = queue.items;
      let head = queue.head;
      while (head < items.length) {
        const waiter = items[head]!;
        if (waiter.expire && waiter.due > now) break;
        head++;
        const expire = waiter.expire;
        waiter.expire = null;
        expire?.();
      }
      if (head === items.length) {
        this.queues.delete(ms);
        queue.items = [];
        queue.head = 0;
      } else {
        queue.head = head;
        next = Math.min(next, items[head]!.due);
      }
    }
    if (next < Number.POSITIVE_INFINITY) this.arm(next);
  }
}

/** The waiter a deadline is watched by now: `waiter`, or the one its deadline moved to. */
function live(waiter: Waiter): Waiter {
  let at = waiter;
  while (at.movedTo !== undefined) at = at.movedTo;
  return at;
}

/** Drop settled waiters (order kept); the next compaction waits until the queue doubles, so it is amortised O(1). */
function compact(queue: Queue): void {
  queue.items = queue.items.filter((w, i) => i >= queue.head && w.expire !== null);
  queue.head = 0;
  queue.compactAt = Math.max(MIN_COMPACT_AT, queue.items.length * 2);
}
