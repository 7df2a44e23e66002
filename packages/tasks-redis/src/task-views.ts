import { queuedView, type TaskEvent, type TaskView } from '@tiffin/core/tasks';
import type { Ending } from './job-records.js';

/** When a task that finished at `at` did, and when it expires. */
export function finalTimes(at: number, ttlMs: number): Pick<TaskView, 'finished_at' | 'expires_at'> {
  return { finished_at: new Date(at).toISOString(), expires_at: new Date(at + ttlMs).toISOString() };
}

/** The view of a task cancelled while queued, from the ending kept in place of its job. */
export function endedView(id: string, ending: Ending & { at: number; api: string }, ttlMs: number): TaskView {
  return {
    ...queuedView(id, ending.api, ending.at),
    ...finalTimes(ending.at, ttlMs),
    status: ending.status,
    error: ending.error,
  };
}

/** The last event of a task that did not succeed. */
export function finalEvent(view: TaskView): TaskEvent {
  return {
    event: view.status,
    data: { request_id: view.id, status: view.status, error: view.error?.error, code: view.error?.code },
  };
}

/** JSON that BullMQ wrote, or null when absent or not JSON (BullMQ reads a corrupt return value as none). */
export function jsonOrNull(text: string | number | null): unknown {
  if (typeof text !== 'string') return null;
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}
