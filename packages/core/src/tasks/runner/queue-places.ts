import { queuedEvent } from '../task-eta.js';
import type { TaskEvent, TaskStore } from '../task-store.js';

/** Least time between two rounds of place events, so a fast-moving queue is not a flood. */
const POSITION_EVENT_MS = 250;

/** One event stream of a queued task: the place it was last told, and the newer place waiting to be sent. */
export class PlaceFollower {
  /** The place last told; undefined while the task is not queued (nothing to tell). */
  told: number | undefined;
  /** A place event not yet taken by the stream (the latest one wins). */
  pending: TaskEvent | undefined;
  /** Wakes the stream when `pending` is set. */
  wake: (() => void) | undefined;

  constructor(readonly id: string) {}

  offer(event: TaskEvent): void {
    this.pending = event;
    this.wake?.();
  }
}

/**
 * The queued tasks followed in this process on one store, and their places as last told: when the store says a
 * task left the queue (`TaskStore.onQueueMoved`: it started, or ended while queued, in any process sharing the
 * store), each follower is told its new place and estimate, read with `status`, in one round at most every
 * `POSITION_EVENT_MS`. The store answers the place; telling it as it changes is done here, once for every store.
 */
export class QueuePlaces {
  private readonly followers = new Set<PlaceFollower>();
  private stopHearing: (() => void) | undefined;
  /** Set while a round is due. */
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly store: TaskStore) {}

  /** Follow `follower` until the returned function is called; the store is heard while anyone is followed. */
  follow(follower: PlaceFollower): () => void {
    this.followers.add(follower);
    this.stopHearing ??= this.store.onQueueMoved?.(() => this.moved()) ?? (() => {});
    return () => {
      this.followers.delete(follower);
      if (this.followers.size > 0) return;
      this.stopHearing?.();
      this.stopHearing = undefined;
    };
  }

  /** A task left the queue: a round is due, unless one is already. */
  private moved(): void {
    if (this.timer || this.followers.size === 0) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.round().catch(() => {});
    }, POSITION_EVENT_MS);
    this.timer.unref();
  }

  private async round(): Promise<void> {
    for (const follower of [...this.followers]) {
      if (follower.told === undefined) continue;
      const view = await this.store.status(follower.id).catch(() => undefined);
      const place = view?.queue_position;
      // Read while the task left the queue, or no longer followed: nothing to tell.
      if (place === undefined || follower.told === undefined || follower.told === place) continue;
      if (!this.followers.has(follower)) continue;
      follower.told = place;
      follower.offer(queuedEvent(follower.id, place, view?.eta_seconds));
    }
  }
}
