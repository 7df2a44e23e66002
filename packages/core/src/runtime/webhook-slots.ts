/** Bounds on task webhook deliveries (`WebhookOptions`; docs/tasks.md, Webhooks). */
export interface DeliveryBounds {
  /** POSTs in flight at once, every host together. */
  maxInFlight: number;
  /** POSTs in flight at once to one host (`host:port`). */
  maxPerHost: number;
  /** Deliveries waiting at once, for a free slot or for their next retry. */
  maxQueued: number;
}

/**
 * The slots webhook POSTs take: at most `maxInFlight` at once and `maxPerHost` to one host, every attempt (a
 * retry too) waiting for one. Deliveries waiting (queued for a slot, or between two attempts) are at most
 * `maxQueued`; one that finds no room is dropped (`start` and `retry` answer null), so what a flood of tasks
 * can make the server hold and open is bounded. Waiting deliveries get slots in turn, host by host (a host
 * that never answers holds its own `maxPerHost` slots, not the others'), each host's in the order they came.
 */
export class WebhookSlots {
  private inFlight = 0;
  /** Deliveries not in flight: queued here, or sleeping before a retry. */
  private waiting = 0;
  private readonly perHost = new Map<string, number>();
  /** Each host's deliveries queued for a slot, hosts in the order they get the next free slot. */
  private readonly queues = new Map<string, Array<() => void>>();

  constructor(private readonly bounds: DeliveryBounds) {}

  /**
   * A slot for a new delivery to `host`: at once when one is free, else once the deliveries queued before it
   * had theirs. Null when it would wait and `maxQueued` wait already: the delivery is dropped.
   */
  start(host: string): Promise<void> | null {
    if (this.free(host) && !this.queues.has(host)) {
      this.take(host);
      return Promise.resolve();
    }
    if (this.waiting >= this.bounds.maxQueued) return null;
    this.waiting++;
    return this.queue(host);
  }

  /**
   * A slot for a delivery's next attempt, `delayMs` after its last one ended (`release`d): it waits among the
   * others meanwhile. Null when `maxQueued` wait already: the delivery is dropped.
   */
  retry(host: string, delayMs: number): Promise<void> | null {
    if (this.waiting >= this.bounds.maxQueued) return null;
    this.waiting++;
    return new Promise<void>((resolve) => setTimeout(resolve, delayMs).unref()).then(() => this.queue(host));
  }

  /** A slot for a delivery counted among the waiting: at once if one is free, else in turn. */
  private queue(host: string): Promise<void> {
    return new Promise((resolve) => {
      const grant = () => {
        this.waiting--;
        this.take(host);
        resolve();
      };
      if (this.free(host) && !this.queues.has(host)) return grant();
      const queue = this.queues.get(host);
      if (queue) queue.push(grant);
      else this.queues.set(host, [grant]);
    });
  }

  /** The POST to `host` ended: its slot goes to the next waiting delivery that may take it. */
  release(host: string): void {
    this.inFlight--;
    const count = (this.perHost.get(host) ?? 1) - 1;
    if (count > 0) this.perHost.set(host, count);
    else this.perHost.delete(host);
    this.dispatch();
  }

  private free(host: string): boolean {
    return this.inFlight < this.bounds.maxInFlight && (this.perHost.get(host) ?? 0) < this.bounds.maxPerHost;
  }

  private take(host: string): void {
    this.inFlight++;
    this.perHost.set(host, (this.perHost.get(host) ?? 0) + 1);
  }

  /** Give free slots to queued deliveries, one host after another (each served host goes to the back). */
  private dispatch(): void {
    while (this.inFlight < this.bounds.maxInFlight) {
      let granted = false;
      for (const [host, queue] of this.queues) {
        if (!this.free(host)) continue;
        const grant = queue.shift() as () => void;
        this.queues.delete(host);
        if (queue.length > 0) this.queues.set(host, queue);
        grant();
        granted = true;
        break;
      }
      if (!granted) return;
    }
  }
}
