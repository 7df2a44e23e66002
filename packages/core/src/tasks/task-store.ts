import type { ErrorBody } from '../errors/index.js';

/** Where a task stands: `queued` → `running` → one of the three final states. */
export type TaskStatus = 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled';

/** The statuses a task ends in. */
export const FINAL_STATUSES: ReadonlySet<TaskStatus> = new Set(['succeeded', 'failed', 'cancelled']);

/** Whether an event is a task's last one (`done`, `failed`, `cancelled`). */
export function isFinalEvent(event: TaskEvent): boolean {
  return event.event === 'done' || event.event === 'failed' || event.event === 'cancelled';
}

/** What `GET /<api>/status?id=` answers. */
export interface TaskView {
  id: string;
  /** The API it was submitted to. */
  api: string;
  status: TaskStatus;
  /** Steps finished and steps in all, as the API function reported them (`ctx.progress`). */
  step: number;
  total_steps: number | null;
  /** The error of a failed or cancelled task: the body the synchronous API would have answered. */
  error: ErrorBody | null;
  created_at: string;
  finished_at: string | null;
  /** When a finished task and its result are forgotten. */
  expires_at: string | null;
  /**
   * A queued task's place in the queue, from 1 (the next to start); absent once it runs. Counts the tasks of
   * every API of the service submitted before it and not started yet.
   */
  queue_position?: number;
  /**
   * Seconds until the task is expected to finish, or null while there is nothing to estimate from: a queued
   * task's `queue_position` times the mean of its API's recent run times; a running task's remaining steps
   * times its mean step time so far. Absent on a finished task. A rough guide: concurrency is not counted.
   */
  eta_seconds?: number | null;
}

/** A task's view when it was submitted (`createdMs`): queued, no step yet; every store's views start from it. */
export function queuedView(id: string, api: string, createdMs: number): TaskView {
  return {
    id,
    api,
    status: 'queued',
    step: 0,
    total_steps: null,
    error: null,
    created_at: new Date(createdMs).toISOString(),
    finished_at: null,
    expires_at: null,
  };
}

/**
 * The submitting request as the task replays it when it runs: plain data, so a durable store can keep it.
 * Credentials (`authorization`, `cookie`) are not kept.
 */
export interface TaskRequest {
  method: string;
  /** Path and query string, as submitted (`/<api>/submit?...`). */
  url: string;
  headers: Array<[string, string]>;
  body: Uint8Array;
}

/**
 * What `cancel` answers: the task's view and, when this call ended the task while it was queued (so it never
 * runs), `queuedRequest`, the request it was stored with: the process that cancelled tells the task's webhook
 * from it, whichever process submitted the task (another replica, or this one before a restart). Clients are
 * sent the view alone.
 */
export type CancelAnswer = TaskView & { queuedRequest?: TaskRequest };

/** The task's answer as the synchronous API would have given it: status, headers and the encoded body. */
export interface TaskResult {
  status: number;
  headers: Array<[string, string]>;
  body: Uint8Array;
}

/** One progress report of a running task (`ctx.progress`). */
export interface TaskProgress {
  step: number;
  totalSteps: number | null;
  /**
   * A small JSON object sent with the step event (a preview, a timestep); the runner drops one over 256 KiB
   * before a store is given it (`tasks/runner/progress-detail.ts`).
   */
  detail?: Readonly<Record<string, unknown>>;
}

/**
 * One server-sent event of a task (`GET /<api>/events?id=`): `queued`, `started`, `step`, then `done`,
 * `failed` or `cancelled`; a task already finished answers one event named by its status with its view.
 */
export interface TaskEvent {
  event: string;
  data: Readonly<Record<string, unknown>>;
}

/** A task a runner took from the store: it is `running` now and its runner owns it until it settles. */
export interface ClaimedTask {
  id: string;
  api: string;
  request: TaskRequest;
  /** This run's number, from 1: above 1 the task was running in a process that stopped, and runs again. */
  attempt: number;
  /**
   * Set when the store ended the task rather than start it: cancelled while queued (a cancel that raced this
   * claim), or out of attempts after its process stopped. Nothing runs; the runner tells the task's webhook.
   */
  ended?: true;
}

/** What `TaskStore.submit` is told besides the request. */
export interface SubmitOptions {
  /**
   * Times the task may start (default 1). A task whose process stops while it runs (a crash, a kill, a lost
   * lease) is started again until it has started this many times, then ends `failed` with `TASK_INTERRUPTED`.
   * A task that fails by itself is not retried: the API answered, and would answer the same again.
   */
  attempts?: number;
  /**
   * Who submitted it (the client's address): a store keeps each client's unfinished tasks within a share of
   * the limit, so that one client's slow tasks cannot hold every slot (429 `JOBS_CLIENT_FULL`).
   */
  client?: string;
}

/** What a store tells `/metrics` (`TaskStore.stats`). */
export interface TaskStoreStats {
  /** Unfinished tasks by API, over every process that shares the store: waiting to start, and running. */
  unfinished: Record<string, { queued: number; running: number }>;
  /** Tasks this store ended `failed` with `TASK_INTERRUPTED` (out of attempts) since it opened, by API. */
  interrupted: Record<string, number>;
}

/**
 * Where tasks live between submit and expiry. The in-memory store (`MemoryTaskStore`) keeps them in one
 * process; a durable one (a file on disk, Redis) implements the same methods so that a restarted process, or
 * any replica, may claim a task and answer for it. Methods are async for that reason. Errors a client sees:
 * `TaskNotFound` (404), `TaskNotDone` (409), `TasksFull` (503), `TasksClientFull` (429), `TaskStoreUnavailable`
 * (503: the store cannot be reached; nothing was recorded).
 *
 * Delivery is at least once: a task whose process stops mid-run is claimed again (`ClaimedTask.attempt`), so
 * an API with side effects uses `ctx.taskId` to make them idempotent. A claim is a lease the store keeps alive
 * while this process lives (a heartbeat of its own); when the process is gone, the lease lapses and the task
 * is queued again or, past its `attempts`, fails with `TASK_INTERRUPTED`.
 */
export interface TaskStore {
  /** Most bytes of one task's encoded answer the store keeps; a runner stops reading past it. */
  readonly maxResultBytes: number;
  /**
   * Record a queued task (once this resolves it is kept: on disk for a durable store); 503 `JOBS_FULL` when
   * the store holds its limit of unfinished tasks or bytes, 429 `JOBS_CLIENT_FULL` past the client's share.
   */
  submit(api: string, request: TaskRequest, options?: SubmitOptions): Promise<TaskView>;
  /** Take the oldest queued task (it becomes `running`, leased to this process), or null when none is queued. */
  claim(): Promise<ClaimedTask | null>;
  /** The running task finished a step. */
  progress(id: string, progress: TaskProgress): Promise<void>;
  /** The running task succeeded with this answer (the store may refuse one over its size bound). */
  complete(id: string, result: TaskResult): Promise<void>;
  /** The running task ended with this error body: `failed`, or `cancelled` when it stopped on a cancel. */
  fail(id: string, error: ErrorBody, status?: 'failed' | 'cancelled'): Promise<void>;
  /**
   * Cancel a task: a queued one ends `cancelled` at once (and its stored request comes back, `CancelAnswer`),
   * a running one is asked to stop (its runner is told through `onCancel`), a finished one stays as it is.
   */
  cancel(id: string): Promise<CancelAnswer>;
  status(id: string): Promise<TaskView>;
  /** The answer of a succeeded task; `TaskNotDone` (409) in any other state. */
  result(id: string): Promise<TaskResult>;
  /**
   * The task's events from now until its final one (starting with the latest, so a late subscriber sees
   * where it stands) or until `signal` aborts. A finished task yields its final state once. A `queued` event
   * need not carry the task's place: core adds it (read with `status`) and tells the subscriber each new place
   * as the queue moves (`onQueueMoved`), for every store alike.
   */
  events(id: string, signal: AbortSignal): AsyncIterable<TaskEvent>;
  /**
   * Call `listener` when a task leaves the queue (it started, or ended while queued) in any process that shares
   * the store, so that the queued tasks followed here are told their new place; returns the unsubscribe.
   */
  onQueueMoved(listener: () => void): () => void;
  /**
   * Call `listener` when the running task `id` is cancelled, by a cancel in any process that shares the store
   * (the store-wide cancel signal); returns the unsubscribe.
   */
  onCancel(id: string, listener: () => void): () => void;
  /**
   * Call `listener` when a task may be waiting to be claimed that this process did not submit (another
   * replica's, or one queued again after its process stopped); returns the unsubscribe. Optional: a store used
   * by one process only needs none.
   */
  onQueued?(listener: () => void): () => void;
  /** Forget finished tasks whose time to live has passed; returns how many were forgotten. */
  expire(): Promise<number>;
  /** Why the store cannot take tasks now (a lost connection), or null when it can; `/readyz` reports it. */
  notReadyReason?(): string | null;
  /**
   * Queue depth and the like for `/metrics`, read at scrape time (so it may cost one round trip to a remote
   * store, bounded). Optional: a store without it reports no depth.
   */
  stats?(): Promise<TaskStoreStats>;
  /**
   * When the oldest task still waiting to start was submitted (ms since the epoch), over every process that
   * shares the store, or null when none waits; `/metrics` reads it at scrape time
   * (`tiffin_api_server_tasks_oldest_queued_seconds`). Optional.
   */
  oldestQueuedAt?(): Promise<number | null>;
  /** Let go of what the store holds open (files, connections); running tasks' leases lapse. */
  close?(): Promise<void>;
}
