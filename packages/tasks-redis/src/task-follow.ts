import {
  FINAL_STATUSES,
  isFinalEvent,
  pushedEvents,
  queuedEvent,
  type TaskEvent,
  type TaskView,
} from '@tiffin/core/tasks';
import type { StoreChannel } from './store-channel.js';

/**
 * Task `id`'s events as this process hears them on the store's channel: its state first (`status`), then each
 * event until its last one or `signal`. It listens before reading the state, so no event falls between the two;
 * the events heard meanwhile follow the first one. A queued task's first event carries its place; core tells
 * its follower each new place as the queue moves (`onQueueMoved`).
 */
export async function* followTask(
  id: string,
  signal: AbortSignal,
  channel: StoreChannel,
  status: (id: string) => Promise<TaskView>,
): AsyncGenerator<TaskEvent> {
  const { listeners } = channel;
  let set = listeners.get(id);
  if (!set) {
    set = new Set();
    listeners.set(id, set);
  }
  const own = set;
  const early: TaskEvent[] = [];
  const keep = (event: TaskEvent) => early.push(event);
  own.add(keep);
  const unsubscribe = (listener: (event: TaskEvent) => void) => {
    own.delete(listener);
    if (own.size === 0) listeners.delete(id);
  };
  try {
    const view = await status(id);
    if (FINAL_STATUSES.has(view.status)) {
      yield { event: view.status, data: { ...view } };
      return;
    }
    // A task that started while its state was read was queued when the stream opened.
    const first: TaskEvent =
      view.status === 'queued' || early[0]?.event === 'started'
        ? queuedEvent(id, view.queue_position, view.eta_seconds)
        : view.step > 0
          ? {
              event: 'step',
              data: { request_id: id, status: 'step', step: view.step, total_steps: view.total_steps },
            }
          : { event: 'started', data: { request_id: id, status: 'started' } };
    yield first;
    if (signal.aborted) return;
    yield* pushedEvents<TaskEvent>(
      (push) => {
        own.delete(keep);
        own.add(push);
        return () => unsubscribe(push);
      },
      signal,
      { first: early.filter((e) => e.event !== first.event || e.event === 'step'), isLast: isFinalEvent },
    );
  } finally {
    unsubscribe(keep);
  }
}
