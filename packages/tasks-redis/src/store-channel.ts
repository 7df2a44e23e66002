import { randomUUID } from 'node:crypto';
import type { TaskEvent } from '@tiffin/core/tasks';
import type { Redis } from 'ioredis';

/** One message on the store's channel: a task event, a cancel, or tasks queued. */
export interface Message {
  /** The task's id (empty for `queued`). */
  id: string;
  /** The store that sent it. */
  from: string;
  kind: 'event' | 'cancel' | 'queued';
  event?: TaskEvent;
}

/** How often a store counts the processes on its channel (whether a `queued` message has anyone to tell). */
const PEERS_MS = 1000;

/**
 * The Redis channel one queue's processes share (`StoreKeys.channel`), and this process's listeners to it: the
 * followers of each task's events, each running task's cancel listeners, the runners told that tasks are queued.
 * The messages that arrive are dispatched by the store (`RedisTaskStore.received`).
 */
export class StoreChannel {
  /** This store, as the `from` of its messages. */
  readonly self = randomUUID();
  /** Each task's event listeners in this process. */
  readonly listeners = new Map<string, Set<(event: TaskEvent) => void>>();
  /** Each task's cancel listeners in this process. */
  readonly cancelListeners = new Map<string, Set<() => void>>();
  /** This process's runners, told that tasks may be queued. */
  readonly queuedListeners = new Set<() => void>();
  /** Told that a task left the queue (`TaskStore.onQueueMoved`). */
  readonly queueMovedListeners = new Set<() => void>();
  /** Set while this tick's `queued` message is due (one for the submits of a tick). */
  private queuedDue = false;
  /**
   * Whether another process listens on the channel (counted every `PEERS_MS`): alone, a submit tells nobody it
   * queued a task (this process's runner is started by the submit itself).
   */
  private peers = true;
  private peersTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly commands: Redis,
    readonly name: string,
  ) {}

  /** `message` as sent, from this store (the text a script publishes too). */
  encode(message: Omit<Message, 'from'>): string {
    const sent: Message = { ...message, from: this.self };
    return JSON.stringify(sent);
  }

  async publish(message: Omit<Message, 'from'>): Promise<void> {
    await this.commands.publish(this.name, this.encode(message)).catch(() => {});
  }

  /**
   * Tell the other processes that tasks are queued: one message for the submits of a tick, sent after their
   * writes (not awaited: the submit is acknowledged by its write, and a process that misses it looks again on
   * its own now and then).
   */
  announceQueued(): void {
    if (this.queuedDue || !this.peers) return;
    this.queuedDue = true;
    setImmediate(() => {
      this.queuedDue = false;
      void this.publish({ id: '', kind: 'queued' });
    });
  }

  /** Tell this process's runners that tasks may be queued. */
  tellQueued(): void {
    for (const listener of this.queuedListeners) listener();
  }

  /** Tell this process's listeners that a task left the queue. */
  tellQueueMoved(): void {
    for (const listener of this.queueMovedListeners) listener();
  }

  /** Tell this process's cancel listeners of task `id`. */
  tellCancelled(id: string): void {
    for (const listener of this.cancelListeners.get(id) ?? []) listener();
  }

  onCancel(id: string, listener: () => void): () => void {
    let set = this.cancelListeners.get(id);
    if (!set) {
      set = new Set();
      this.cancelListeners.set(id, set);
    }
    const own = set;
    own.add(listener);
    return () => {
      own.delete(listener);
      if (own.size === 0) this.cancelListeners.delete(id);
    };
  }

  /** Count the processes on the channel now and every `PEERS_MS`, until `stopWatching`. */
  watchPeers(): void {
    const count = () =>
      void this.commands
        .pubsub('NUMSUB', this.name)
        .then((reply) => {
          // Only this process's subscriber: nobody else to tell. Anything else (none: it reconnects) tells.
          this.peers = Number((reply as unknown[])[1]) !== 1;
        })
        .catch(() => {
          this.peers = true;
        });
    count();
    this.peersTimer = setInterval(count, PEERS_MS);
    this.peersTimer.unref();
  }

  stopWatching(): void {
    clearInterval(this.peersTimer);
  }
}
