import { POSITION_EVENT_MS, queuedEvent, type TaskView } from '@tiffin/core/tasks';
import type { StoreChannel } from './store-channel.js';

/**
 * The queue positions this process's followers of queued tasks were last told: when a task leaves the queue (it
 * started, or ended while queued) they hear their new place, in one round at most every `POSITION_EVENT_MS`, a
 * status read each.
 */
export class QueuePositions {
  private readonly told = new Map<string, number>();
  /** Set while a round is due. */
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly channel: StoreChannel,
    private readonly status: (id: string) => Promise<TaskView>,
    private readonly closed: () => boolean,
  ) {}

  /** Task `id`'s follower was told place `position`. */
  set(id: string, position: number): void {
    this.told.set(id, position);
  }

  /** Task `id` is no longer queued, or no longer followed here. */
  forget(id: string): void {
    this.told.delete(id);
  }

  /** A task left the queue: a round is due, unless one is or nobody here follows a task. */
  announce(): void {
    if (this.timer || this.channel.listeners.size === 0 || this.closed()) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.refresh().catch(() => {});
    }, POSITION_EVENT_MS);
    this.timer.unref();
  }

  private async refresh(): Promise<void> {
    const { listeners } = this.channel;
    for (const id of [...listeners.keys()]) {
      if (!this.told.has(id)) continue;
      const view = await this.status(id);
      const position = view.queue_position;
      if (position === undefined || this.told.get(id) === position || !listeners.has(id)) continue;
      this.told.set(id, position);
      for (const listener of listeners.get(id) ?? []) listener(queuedEvent(id, position, view.eta_seconds));
    }
  }
}
