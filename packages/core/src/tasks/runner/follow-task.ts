import { queuedEvent } from '../task-eta.js';
import { isFinalEvent, type TaskEvent, type TaskStore } from '../task-store.js';
import { PlaceFollower, QueuePlaces } from './queue-places.js';

/** One `QueuePlaces` per store, made when its first queued task is followed. */
const placesByStore = new WeakMap<TaskStore, QueuePlaces>();

/**
 * Task `id`'s events as `GET /<api>/events` sends them: the store's own (`TaskStore.events`), with each `queued`
 * one carrying the task's place and estimate (read with `status` when the store's event has none), and while
 * the task waits, a `queued` event each time its place changes (`QueuePlaces`). The first event is read before
 * anything is yielded, so an unknown id throws from the first `next()`.
 */
export async function* followTask(
  store: TaskStore,
  id: string,
  signal: AbortSignal,
): AsyncGenerator<TaskEvent> {
  let places = placesByStore.get(store);
  if (!places) {
    places = new QueuePlaces(store);
    placesByStore.set(store, places);
  }
  const source = store.events(id, signal)[Symbol.asyncIterator]();
  const follower = new PlaceFollower(id);
  let unfollow: (() => void) | undefined;
  try {
    let next = source.next();
    for (;;) {
      const pending = follower.pending;
      if (pending) {
        follower.pending = undefined;
        yield pending;
        continue;
      }
      const woken = new Promise<undefined>((resolve) => {
        follower.wake = () => resolve(undefined);
      });
      const got = await Promise.race([next, woken]);
      follower.wake = undefined;
      if (got === undefined) continue;
      if (got.done) return;
      let event = got.value;
      if (event.event === 'queued') {
        event = await placed(store, id, event);
        const place = event.data.queue_position;
        follower.told = typeof place === 'number' ? place : undefined;
        unfollow ??= places.follow(follower);
      } else {
        // Not queued (any more): a place read before this event is not sent after it.
        follower.told = undefined;
        follower.pending = undefined;
      }
      yield event;
      if (isFinalEvent(event) || signal.aborted) return;
      next = source.next();
    }
  } finally {
    unfollow?.();
    // Not awaited: with a read of the store's stream still out, its return waits for that read to settle
    // (an event, or `signal`), which a consumer that leaves should not wait for.
    void source.return?.(undefined)?.catch(() => {});
  }
}

/** A `queued` event with the task's place and estimate: as the store sent it, or read with `status`. */
async function placed(store: TaskStore, id: string, event: TaskEvent): Promise<TaskEvent> {
  if (event.data.queue_position !== undefined) return event;
  const view = await store.status(id);
  return view.status === 'queued' ? queuedEvent(id, view.queue_position, view.eta_seconds) : event;
}
