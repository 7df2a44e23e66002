import type { ErrorBody, TaskStore } from '@tiffin/core';
import {
  type CancelAnswer,
  type ClaimedTask,
  isFinalEvent,
  queuedEvent,
  type SubmitOptions,
  type TaskEvent,
  TaskNotDone,
  type TaskProgress,
  type TaskRequest,
  type TaskResult,
  type TaskStoreStats,
  type TaskView,
} from '@tiffin/core/tasks';
import { Queue, Worker } from 'bullmq';
import { BULLMQ_PREFIX, eventsStreamKey } from './bullmq-assumptions.js';
import { HeldBytes } from './held-bytes.js';
import { oldestQueuedAt, queueStats } from './queue-stats.js';
import { QueuedHint } from './queued-hint.js';
import { type Message, StoreChannel } from './store-channel.js';
import { defineStoreCommands } from './store-commands.js';
import { StoreConnections } from './store-connections.js';
import type { StoreContext } from './store-context.js';
import { StoreKeys } from './store-keys.js';
import { type RedisTaskStoreOptions, storeSettings } from './store-options.js';
import { admit } from './task-admission.js';
import { TaskClaims } from './task-claims.js';
import { TaskEndings } from './task-endings.js';
import { followTask } from './task-follow.js';
import { TaskLeases } from './task-leases.js';
import { readTask } from './task-reads.js';
import { TaskSettlement } from './task-settlement.js';

export type { RedisTaskStoreOptions } from './store-options.js';

/**
 * Tasks in Redis, through BullMQ: every replica (and every `--workers` process) submits to one queue and
 * claims from it, so status, events, results and cancel answer the same from any of them. A claim is a
 * BullMQ job taken by hand (`Worker.getNextJob`) under a lock this process renews; when the process dies the
 * lock lapses and BullMQ's stalled-job check puts the job back in the queue, where the next claim starts it
 * again or, past its `attempts`, fails it with `TASK_INTERRUPTED`. Events and cancels travel on one Redis
 * channel per queue. While Redis is unreachable every call answers 503 `TASK_STORE_UNAVAILABLE` (nothing is
 * acknowledged that was not written) and `notReadyReason` says so; work resumes when it returns.
 *
 * Its parts, one concern each: the submit's admission (`task-admission.ts`), claims and their leases
 * (`task-claims.ts`, `task-leases.ts`), a running task's end (`task-settlement.ts`), the bookkeeping of any end
 * and cancels (`task-endings.ts`), a task's state and events (`task-reads.ts`, `task-follow.ts`; core tells
 * a follower its place as the queue moves, `onQueueMoved`), the channel between processes (`store-channel.ts`), the connections and readiness
 * (`store-connections.ts`), the scripts (`commands/*.lua`, `store-commands.ts`) and what they assume of BullMQ
 * (`bullmq-assumptions.ts`). This class wires them and answers the `TaskStore` contract.
 */
export class RedisTaskStore implements TaskStore {
  readonly maxResultBytes: number;
  private readonly connections: StoreConnections;
  private readonly channel: StoreChannel;
  private readonly hint = new QueuedHint();
  private readonly leases: TaskLeases;
  private readonly endings: TaskEndings;
  private readonly claims: TaskClaims;
  private readonly settlement: TaskSettlement;

  private constructor(private readonly ctx: StoreContext) {
    this.connections = ctx.connections;
    this.maxResultBytes = ctx.settings.maxResultBytes;
    this.channel = new StoreChannel(ctx.connections.commands, ctx.keys.channel);
    this.leases = new TaskLeases(ctx.settings.leaseMs, () => this.connections.closed);
    this.endings = new TaskEndings(ctx, this.channel);
    this.claims = new TaskClaims(ctx, this.leases, this.hint, this.endings, this.channel);
    this.settlement = new TaskSettlement(ctx, this.leases, this.endings, this.claims);
  }

  /** Connect to Redis and the queue; rejects when Redis cannot be reached now. */
  static async open(options: RedisTaskStoreOptions): Promise<RedisTaskStore> {
    const settings = storeSettings(options);
    const { name, leaseMs } = settings;
    const connections = await StoreConnections.open(options.url);
    const scripts = defineStoreCommands(connections.commands);
    const workerScripts = defineStoreCommands(connections.worker);
    const queue = new Queue(name, { connection: connections.commands, prefix: BULLMQ_PREFIX });
    const worker = new Worker(name, null, {
      connection: connections.worker,
      prefix: BULLMQ_PREFIX,
      autorun: false,
      lockDuration: leaseMs,
      stalledInterval: Math.max(500, Math.floor(leaseMs / 2)),
      // Attempts are counted by the claim (the job's attemptsStarted), so a stalled job always goes back.
      maxStalledCount: 1_000_000,
    });
    worker.on('error', () => {});
    queue.on('error', () => {});
    const { commands, subscriber } = connections;
    const held = new HeldBytes(
      commands,
      scripts,
      name,
      eventsStreamKey(queue),
      settings.ttlMs,
      settings.maxHeldBytes,
    );
    const keys = new StoreKeys(name);
    const store = new RedisTaskStore({
      settings,
      connections,
      scripts,
      workerScripts,
      queue,
      worker,
      keys,
      held,
    });
    subscriber.on('message', (_channel, text: string) => store.received(text));
    // A stalled job this process's check put back in the queue: every process hears it may claim it.
    worker.on('stalled', (id: string) => store.requeued(id));
    await subscriber.subscribe(keys.channel);
    store.channel.watchPeers();
    connections.watch();
    // BullMQ's stalled-job check: jobs whose process died go back to the queue.
    void worker.startStalledCheckTimer().catch(() => {});
    return store;
  }

  notReadyReason(): string | null {
    return this.connections.notReadyReason();
  }

  onQueued(listener: () => void): () => void {
    this.channel.queuedListeners.add(listener);
    // A stalled job goes back to the queue without a message: look again now and then.
    const timer = setInterval(
      () => {
        this.hint.mayBeQueued();
        listener();
      },
      Math.max(500, Math.floor(this.ctx.settings.leaseMs / 2)),
    );
    timer.unref();
    return () => {
      this.channel.queuedListeners.delete(listener);
      clearInterval(timer);
    };
  }

  async submit(api: string, request: TaskRequest, options: SubmitOptions = {}): Promise<TaskView> {
    return this.connections.reach(async () => {
      const view = await admit(this.ctx, api, request, options);
      this.hint.mayBeQueued();
      this.channel.announceQueued();
      return view;
    });
  }

  async claim(): Promise<ClaimedTask | null> {
    return this.connections.reach(() => this.claims.claim());
  }

  async progress(id: string, { step, totalSteps, detail }: TaskProgress): Promise<void> {
    const lease = this.leases.get(id);
    if (!lease) return;
    await lease.job.updateProgress({ step, total_steps: totalSteps });
    await this.channel.publish({
      id,
      kind: 'event',
      event: {
        event: 'step',
        data: { request_id: id, status: 'step', step, total_steps: totalSteps, ...detail },
      },
    });
  }

  async complete(id: string, result: TaskResult): Promise<void> {
    return this.settlement.complete(id, result);
  }

  async fail(id: string, error: ErrorBody, status: 'failed' | 'cancelled' = 'failed'): Promise<void> {
    return this.settlement.fail(id, error, status);
  }

  async cancel(id: string): Promise<CancelAnswer> {
    return this.connections.reach(() => this.endings.cancel(id));
  }

  async status(id: string): Promise<TaskView> {
    return this.connections.reach(async () => (await readTask(this.ctx, id)).view);
  }

  async result(id: string): Promise<TaskResult> {
    return this.connections.reach(async () => {
      const { view, result } = await readTask(this.ctx, id, true);
      if (view.status === 'succeeded' && result) return result;
      throw new TaskNotDone(`task ${id} is ${view.status}; its result is available once it has succeeded`, {
        detail: { ...view },
      });
    });
  }

  events(id: string, signal: AbortSignal): AsyncGenerator<TaskEvent> {
    return followTask(id, signal, this.channel, (task) => this.status(task));
  }

  /** Waiting and running tasks by API, from BullMQ's lists in one bounded script (what `/metrics` shows). */
  async stats(): Promise<TaskStoreStats> {
    return this.connections.reach(() => queueStats(this.ctx, this.claims.interrupted));
  }

  /** The oldest waiting job's submit time: the wait list's tail (claimed next), one bounded round trip. */
  async oldestQueuedAt(): Promise<number | null> {
    return this.connections.reach(() => oldestQueuedAt(this.ctx));
  }

  onCancel(id: string, listener: () => void): () => void {
    return this.channel.onCancel(id, listener);
  }

  /** A task started or ended, in any process on the queue (heard on the channel): the queue moved. */
  onQueueMoved(listener: () => void): () => void {
    this.channel.queueMovedListeners.add(listener);
    return () => this.channel.queueMovedListeners.delete(listener);
  }

  async expire(): Promise<number> {
    return this.connections.reach(async () => {
      const grace = this.ctx.settings.ttlMs;
      const done = await this.ctx.queue.clean(grace, 1000, 'completed');
      const failed = await this.ctx.queue.clean(grace, 1000, 'failed');
      return done.length + failed.length;
    });
  }

  /**
   * Stop claiming; the tasks this process runs go back to the queue at once (`handBack`, the default), or are
   * left to lapse as a killed process leaves them.
   */
  async close(handBack = true): Promise<void> {
    if (this.connections.closed) return;
    this.connections.closed = true;
    this.channel.stopWatching();
    this.connections.stopWatching();
    // The other processes claim what went back now, not at their next periodic look.
    if (await this.leases.release(handBack)) await this.channel.publish({ id: '', kind: 'queued' });
    await Promise.allSettled([this.ctx.worker.close(true), this.ctx.queue.close()]);
    this.connections.disconnect();
  }

  /**
   * A job whose process stopped went back to the queue here (BullMQ's stalled-job check puts it at the end the
   * next claim takes from): this process and the others look for it now, and its followers hear it is queued.
   */
  private requeued(id: string): void {
    this.hint.mayBeQueued();
    this.channel.announceQueued();
    this.channel.tellQueued();
    void this.channel.publish({ id, kind: 'event', event: queuedEvent(id, 1, null) });
  }

  /** A message on the store's channel, from this process or another. */
  private received(text: string): void {
    let message: Message;
    try {
      message = JSON.parse(text) as Message;
    } catch {
      return;
    }
    if (message.kind === 'queued') {
      // This process's own submits start its runner already: a second look would only find nothing.
      if (message.from !== this.channel.self) {
        this.hint.mayBeQueued();
        this.channel.tellQueued();
      }
    } else if (message.kind === 'cancel') {
      // Only the process that runs the task acts on it (the one that cancelled already told its own).
      if (message.from !== this.channel.self && this.leases.has(message.id))
        this.channel.tellCancelled(message.id);
    } else if (message.event) {
      for (const listener of this.channel.listeners.get(message.id) ?? []) listener(message.event);
      if (message.event.event === 'started' || isFinalEvent(message.event)) this.channel.tellQueueMoved();
    }
  }
}
