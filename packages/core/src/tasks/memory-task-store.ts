import { randomUUID } from 'node:crypto';
import { Cancelled, type ErrorBody, truncateForMessage } from '../errors/index.js';
import { ExpiryQueue } from './expiry-queue.js';
import { pushedEvents } from './pushed-events.js';
import { clientShare, TASK_OVERHEAD_BYTES } from './task-bounds.js';
import {
  TaskInterrupted,
  TaskNotDone,
  TaskNotFound,
  TaskResultTooLarge,
  TasksClientFull,
  TasksFull,
} from './task-errors.js';
import { queuedEta, RECENT_RUNS, runningEta } from './task-eta.js';
import type {
  CancelAnswer,
  ClaimedTask,
  SubmitOptions,
  TaskEvent,
  TaskProgress,
  TaskRequest,
  TaskResult,
  TaskStatus,
  TaskStore,
  TaskStoreStats,
  TaskView,
} from './task-store.js';
import { FINAL_STATUSES as FINAL, isFinalEvent, queuedView } from './task-store.js';
import { WaitingQueue } from './waiting-queue.js';

export interface MemoryTaskStoreOptions {
  /** Unfinished (queued and running) tasks held at once (default 64); past it a submit is a 503 `JOBS_FULL`. */
  maxTasks: number;
  /**
   * Unfinished tasks one client (`SubmitOptions.client`) may hold (default a quarter of `maxTasks`); past it
   * its submit is a 429 `JOBS_CLIENT_FULL`, so one client's slow tasks leave room for the others.
   */
  maxClientTasks?: number;
  /** Seconds a finished task's status and result are kept (default 600). */
  resultTtl: number;
  /** Most bytes of one task's encoded answer (default 64 MiB); a larger one fails the task with 507. */
  maxResultBytes: number;
  /**
   * Most bytes held in all (queued requests' bodies, finished answers, and a small overhead per task; default
   * 512 MiB). A finished answer is kept for its whole `resultTtl`, never dropped to make room: past the bound
   * a submit is a 503 and an answer that does not fit fails its task with 507.
   */
  maxHeldBytes: number;
}

export const DEFAULT_TASK_STORE_OPTIONS: Readonly<MemoryTaskStoreOptions> = {
  maxTasks: 64,
  resultTtl: 600,
  maxResultBytes: 64 * 1024 * 1024,
  maxHeldBytes: 512 * 1024 * 1024,
};

type Listener = (event: TaskEvent) => void;

/** What a durable store built on this one writes down for a task (see `MemoryTaskStore.persist`). */
export interface StoredTask {
  view: TaskView;
  client: string | undefined;
  /** Dropped once the task runs to the end: its body is not needed any more. */
  request: TaskRequest | null;
  result: TaskResult | null;
  expiresMs: number | null;
  /** Times it may start, and times it started. */
  attempts: number;
  attempt: number;
}

interface Entry extends StoredTask {
  startedMs: number | null;
  /** The latest event of an unfinished task, for a late subscriber. */
  latest: TaskEvent;
  listeners: Set<Listener>;
  cancelListeners: Set<() => void>;
}

/**
 * Tasks in this process's memory: bounded in count, each result bounded in size, finished ones forgotten
 * after `resultTtl` seconds. They are lost when the process stops and not shared between replicas. A store
 * for one process that keeps its tasks on disk extends it: it writes each change down (`persist`, awaited
 * before the change is acknowledged) and reads them back when it opens (`restore`).
 */
export class MemoryTaskStore implements TaskStore {
  private readonly tasks = new Map<string, Entry>();
  protected readonly options: MemoryTaskStoreOptions;
  // Kept as the tasks change, so that no call walks every task held (finished ones stay for their TTL).
  /** Queued tasks in the order they are claimed. */
  private readonly waiting = new WaitingQueue<Entry>(
    (id) => this.tasks.get(id),
    (entry) => entry.view.status === 'queued' && entry.request !== null,
  );
  /** Tasks `restore` ended (out of attempts) that no claim has handed over yet (`ClaimedTask.ended`). */
  private readonly endedUnclaimed: ClaimedTask[] = [];
  private unfinishedCount = 0;
  private readonly clientTasks = new Map<string, number>();
  /** Bytes held (see `heldBytes`). */
  private held = 0;
  /** Finished tasks in the order they expire. */
  private readonly expiries = new ExpiryQueue((id, at) => this.forget(id, at));
  /** Tasks ended `TASK_INTERRUPTED` since the store opened, by API (`stats`). */
  private readonly interrupted: Record<string, number> = {};
  /** Each API's recent run times in seconds, for the estimates (`eta_seconds`). */
  private readonly runSeconds = new Map<string, number[]>();
  /** Told when a task leaves the queue (`onQueueMoved`). */
  private readonly queueMoved = new Set<() => void>();

  constructor(options: Partial<MemoryTaskStoreOptions> = {}) {
    this.options = { ...DEFAULT_TASK_STORE_OPTIONS, ...options };
  }

  get maxResultBytes(): number {
    return this.options.maxResultBytes;
  }

  /** Event streams subscribed now, over every task (a diagnostic: it returns to 0 when clients leave). */
  get subscribers(): number {
    let count = 0;
    for (const entry of this.tasks.values()) count += entry.listeners.size;
    return count;
  }

  /** Tasks held now, finished ones included. */
  get size(): number {
    return this.tasks.size;
  }

  async submit(api: string, request: TaskRequest, options: SubmitOptions = {}): Promise<TaskView> {
    this.sweep();
    const { maxTasks, maxHeldBytes } = this.options;
    const unfinished = this.unfinishedCount;
    const clients = options.client === undefined ? 0 : (this.clientTasks.get(options.client) ?? 0);
    const retry = { headers: { 'retry-after': '1' } };
    if (unfinished >= maxTasks)
      throw new TasksFull(`${maxTasks} tasks are unfinished; retry when one finishes`, retry);
    const share = clientShare(maxTasks, this.options.maxClientTasks);
    if (clients >= share)
      throw new TasksClientFull(`You have ${share} unfinished tasks; retry when one finishes`, retry);
    if (this.held + request.body.byteLength + TASK_OVERHEAD_BYTES > maxHeldBytes)
      throw new TasksFull(
        `The tasks hold the ${maxHeldBytes} bytes this server keeps; retry when one finishes or expires`,
        retry,
      );
    const id = randomUUID();
    const entry: Entry = {
      client: options.client,
      attempts: Math.max(1, options.attempts ?? 1),
      attempt: 0,
      view: queuedView(id, api, Date.now()),
      request,
      result: null,
      startedMs: null,
      expiresMs: null,
      latest: { event: 'queued', data: { request_id: id, status: 'queued' } },
      listeners: new Set(),
      cancelListeners: new Set(),
    };
    this.tasks.set(id, entry);
    this.counted(entry, 1);
    try {
      await this.persist(entry);
    } catch (err) {
      this.tasks.delete(id);
      this.counted(entry, -1);
      throw err;
    }
    return this.viewOf(entry);
  }

  async claim(): Promise<ClaimedTask | null> {
    const ended = this.endedUnclaimed.shift();
    if (ended) return ended;
    for (const id of this.waiting) {
      this.waiting.delete(id);
      const entry = this.tasks.get(id);
      if (entry?.view.status !== 'queued' || !entry.request) continue;
      entry.view.status = 'running';
      entry.attempt++;
      entry.startedMs = performance.now();
      await this.persist(entry);
      this.emit(entry, { event: 'started', data: { request_id: entry.view.id, status: 'started' } });
      this.movedQueue();
      return { id: entry.view.id, api: entry.view.api, request: entry.request, attempt: entry.attempt };
    }
    return null;
  }

  async progress(id: string, { step, totalSteps, detail }: TaskProgress): Promise<void> {
    const entry = this.tasks.get(id);
    if (entry?.view.status !== 'running') return;
    entry.view.step = step;
    entry.view.total_steps = totalSteps ?? entry.view.total_steps;
    // Not awaited: a step lost in a crash is reported again when the task runs again.
    void this.persist(entry).catch(() => {});
    this.emit(entry, {
      event: 'step',
      data: { request_id: id, status: 'step', step, total_steps: entry.view.total_steps, ...detail },
    });
  }

  async complete(id: string, result: TaskResult): Promise<void> {
    const entry = this.tasks.get(id);
    if (!entry || FINAL.has(entry.view.status)) return;
    const { maxResultBytes, maxHeldBytes } = this.options;
    const size = result.body.byteLength;
    if (size > maxResultBytes) {
      const tooLarge = new TaskResultTooLarge(
        `The task's answer is ${size} bytes; this server keeps at most ${maxResultBytes}`,
      );
      return this.fail(id, tooLarge.toBody());
    }
    // The request's body is let go as the answer comes in.
    const own = entry.request?.body.byteLength ?? 0;
    if (this.held - own + size > maxHeldBytes) {
      const full = new TaskResultTooLarge(
        `The task's answer (${size} bytes) does not fit in the ${maxHeldBytes} bytes the other tasks leave`,
      );
      return this.fail(id, full.toBody());
    }
    entry.result = result;
    this.finish(entry, 'succeeded', null);
    await this.persist(entry);
    const seconds = entry.startedMs === null ? 0 : (performance.now() - entry.startedMs) / 1000;
    if (entry.startedMs !== null) this.recordRun(entry.view.api, seconds);
    this.emit(entry, { event: 'done', data: { request_id: id, status: 'done', seconds } });
  }

  async fail(id: string, error: ErrorBody, status: 'failed' | 'cancelled' = 'failed'): Promise<void> {
    const entry = this.tasks.get(id);
    if (!entry || FINAL.has(entry.view.status)) return;
    const wasQueued = entry.view.status === 'queued';
    this.finish(entry, status, error);
    await this.persist(entry);
    if (wasQueued) this.movedQueue();
    this.emit(entry, {
      event: status,
      data: { request_id: id, status, error: error.error, code: error.code },
    });
  }

  async cancel(id: string): Promise<CancelAnswer> {
    const entry = this.entry(id);
    if (entry.view.status === 'queued') {
      // Ended here and now (`fail` ends it before its first wait): no other cancel can end it too.
      const queuedRequest = entry.request ?? undefined;
      await this.fail(id, new Cancelled(`task ${id} was cancelled before it started`).toBody(), 'cancelled');
      return { ...this.viewOf(entry), queuedRequest };
    }
    if (entry.view.status === 'running') {
      for (const listener of entry.cancelListeners) listener();
    }
    return this.viewOf(entry);
  }

  async status(id: string): Promise<TaskView> {
    return this.viewOf(this.entry(id));
  }

  async result(id: string): Promise<TaskResult> {
    const entry = this.entry(id);
    if (entry.view.status === 'succeeded' && entry.result) return entry.result;
    throw new TaskNotDone(
      `task ${id} is ${entry.view.status}; its result is available once it has succeeded`,
      { detail: { ...entry.view } },
    );
  }

  async *events(id: string, signal: AbortSignal): AsyncGenerator<TaskEvent> {
    const entry = this.entry(id);
    if (FINAL.has(entry.view.status)) {
      yield { event: entry.view.status, data: { ...entry.view } };
      return;
    }
    yield* pushedEvents<TaskEvent>(
      (push) => {
        entry.listeners.add(push);
        return () => entry.listeners.delete(push);
      },
      signal,
      { first: [entry.latest], isLast: isFinalEvent },
    );
  }

  onQueueMoved(listener: () => void): () => void {
    this.queueMoved.add(listener);
    return () => this.queueMoved.delete(listener);
  }

  onCancel(id: string, listener: () => void): () => void {
    const entry = this.tasks.get(id);
    if (!entry) return () => {};
    entry.cancelListeners.add(listener);
    return () => entry.cancelListeners.delete(listener);
  }

  async expire(): Promise<number> {
    return this.sweep();
  }

  async oldestQueuedAt(): Promise<number | null> {
    for (const id of this.waiting) {
      const entry = this.tasks.get(id);
      if (entry?.view.status === 'queued' && entry.request) return Date.parse(entry.view.created_at);
    }
    return null;
  }

  async stats(): Promise<TaskStoreStats> {
    const unfinished: TaskStoreStats['unfinished'] = {};
    for (const { view } of this.tasks.values()) {
      if (FINAL.has(view.status)) continue;
      unfinished[view.api] ??= { queued: 0, running: 0 };
      const counts = unfinished[view.api] as { queued: number; running: number };
      if (view.status === 'queued') counts.queued++;
      else counts.running++;
    }
    return { unfinished, interrupted: { ...this.interrupted } };
  }

  /**
   * Write the task down as it stands now (a durable store); a submit is acknowledged, a claim answered and an
   * end reported only once it resolves. The default keeps nothing.
   */
  protected persist(_task: StoredTask): Promise<void> {
    return Promise.resolve();
  }

  /** The task was forgotten (its time to live passed): a durable store deletes it. */
  protected unpersist(_id: string): void {}

  /**
   * Take back the tasks a stopped process wrote down, oldest first: queued ones stay queued, running ones are
   * queued again while they have attempts left, else fail with `TASK_INTERRUPTED`; finished ones are kept
   * until they expire. Returns the tasks whose state changed, for the caller to write down.
   */
  protected restore(stored: Iterable<StoredTask>): StoredTask[] {
    const changed: StoredTask[] = [];
    const finished: Entry[] = [];
    const now = Date.now();
    for (const task of stored) {
      if (task.expiresMs !== null && task.expiresMs <= now) {
        this.unpersist(task.view.id);
        continue;
      }
      const entry: Entry = {
        ...task,
        startedMs: null,
        latest: { event: 'queued', data: { request_id: task.view.id, status: 'queued' } },
        listeners: new Set(),
        cancelListeners: new Set(),
      };
      this.tasks.set(task.view.id, entry);
      if (FINAL.has(task.view.status)) {
        this.held += (task.result?.body.byteLength ?? 0) + TASK_OVERHEAD_BYTES;
        finished.push(entry);
        continue;
      }
      this.counted(entry, 1);
      if (task.view.status !== 'running') continue;
      if (task.attempt < task.attempts && task.request) {
        entry.view.status = 'queued';
        entry.view.step = 0;
      } else {
        const interrupted = new TaskInterrupted(
          `task ${task.view.id} was running when its server stopped, ${task.attempt} time(s) of the ${task.attempts} it may start`,
        );
        const { request } = task;
        this.finish(entry, 'failed', interrupted.toBody());
        this.interrupted[task.view.api] = (this.interrupted[task.view.api] ?? 0) + 1;
        // The next claim hands it over as ended, so that the runner tells its webhook.
        if (request)
          this.endedUnclaimed.push({
            id: task.view.id,
            api: task.view.api,
            request,
            attempt: task.attempt,
            ended: true,
          });
      }
      changed.push(entry);
    }
    // Ended before this process: they expire first, in their own order.
    finished.sort((a, b) => (a.expiresMs ?? 0) - (b.expiresMs ?? 0));
    this.expiries.prepend(finished.map((e) => ({ id: e.view.id, at: e.expiresMs ?? now })));
    return changed;
  }

  /** Unfinished tasks now (queued and running). */
  protected get unfinished(): number {
    return this.unfinishedCount;
  }

  /**
   * Count an unfinished task in (`sign` 1: submitted, or taken back queued) or out (-1: its submit was not
   * written): the unfinished and per-client counts, its bytes, the claim order.
   */
  private counted(entry: Entry, sign: 1 | -1): void {
    this.unfinishedCount += sign;
    if (entry.client !== undefined) this.addClient(entry.client, sign);
    this.held += sign * ((entry.request?.body.byteLength ?? 0) + TASK_OVERHEAD_BYTES);
    if (sign === 1) this.waiting.add(entry.view.id);
    else this.waiting.delete(entry.view.id);
  }

  private addClient(client: string, delta: number): void {
    const count = (this.clientTasks.get(client) ?? 0) + delta;
    if (count > 0) this.clientTasks.set(client, count);
    else this.clientTasks.delete(client);
  }

  /** The task's view with, while it is unfinished, its place in the queue and its estimate. */
  private viewOf(entry: Entry): TaskView {
    const view: TaskView = { ...entry.view };
    if (view.status === 'queued') {
      view.queue_position = this.waiting.positionOf(entry);
      view.eta_seconds = queuedEta(view.queue_position, this.runSeconds.get(view.api) ?? []);
    } else if (view.status === 'running') {
      const elapsed = entry.startedMs === null ? 0 : (performance.now() - entry.startedMs) / 1000;
      view.eta_seconds = runningEta(view.step, view.total_steps, elapsed);
    }
    return view;
  }

  private recordRun(api: string, seconds: number): void {
    const runs = this.runSeconds.get(api) ?? [];
    runs.push(seconds);
    if (runs.length > RECENT_RUNS) runs.shift();
    this.runSeconds.set(api, runs);
  }

  /** A task left the queue: core tells the queued tasks followed their new place (`onQueueMoved`). */
  private movedQueue(): void {
    for (const listener of this.queueMoved) listener();
  }

  private entry(id: string): Entry {
    this.sweep();
    const entry = this.tasks.get(id);
    if (!entry) throw new TaskNotFound(`no task ${truncateForMessage(id)} (unknown, or its result expired)`);
    return entry;
  }

  private finish(entry: Entry, status: TaskStatus, error: ErrorBody | null): void {
    const now = Date.now();
    if (!FINAL.has(entry.view.status)) {
      this.unfinishedCount--;
      if (entry.client !== undefined) this.addClient(entry.client, -1);
      this.waiting.delete(entry.view.id);
    }
    // The request's body is let go, the answer (if any) kept.
    this.held += (entry.result?.body.byteLength ?? 0) - (entry.request?.body.byteLength ?? 0);
    entry.view.status = status;
    entry.view.error = error;
    entry.view.finished_at = new Date(now).toISOString();
    entry.expiresMs = now + this.options.resultTtl * 1000;
    entry.view.expires_at = new Date(entry.expiresMs).toISOString();
    entry.request = null;
    entry.cancelListeners.clear();
    this.expiries.push(entry.view.id, entry.expiresMs);
  }

  private emit(entry: Entry, event: TaskEvent): void {
    entry.latest = event;
    for (const listener of entry.listeners) listener(event);
  }

  /** Forget finished tasks past their time; returns how many. */
  private sweep(): number {
    return this.expiries.sweep();
  }

  /** The finished task `id` expired `at`: forget it, unless it was kept again since (it then expires later). */
  private forget(id: string, at: number): boolean {
    const entry = this.tasks.get(id);
    if (entry?.expiresMs !== at) return false;
    this.tasks.delete(id);
    this.held -= (entry.result?.body.byteLength ?? 0) + TASK_OVERHEAD_BYTES;
    this.unpersist(id);
    return true;
  }
}
