import { randomUUID } from 'node:crypto';
import { type ErrorBody, type TaskStore, TiffinError } from '@tiffin/core';
import {
  type CancelAnswer,
  Cancelled,
  type ClaimedTask,
  clientShare,
  FINAL_STATUSES,
  isFinalEvent,
  MAX_DETAIL_BYTES,
  POSITION_EVENT_MS,
  pushedEvents,
  queuedEta,
  queuedEvent,
  RECENT_RUNS,
  runningEta,
  type SubmitOptions,
  type TaskEvent,
  TaskInterrupted,
  TaskNotDone,
  TaskNotFound,
  type TaskProgress,
  type TaskRequest,
  type TaskResult,
  TaskResultTooLarge,
  type TaskStoreStats,
  TaskStoreUnavailable,
  TasksClientFull,
  TasksFull,
  type TaskView,
  truncateForMessage,
} from '@tiffin/core/internal';
import { Job, Queue, Worker } from 'bullmq';
import { Redis, type RedisOptions } from 'ioredis';
import { AnswerWatch } from './answer-watch.js';
import { coalesceWrites } from './coalesced-writes.js';
import { ADMIT_SCRIPT, DEFAULT_MAX_HELD_BYTES, endedLua, HELD_LUA, HeldBytes } from './held-bytes.js';

export interface RedisTaskStoreOptions {
  /** `redis://[user:password@]host:port/db` (or `rediss://`). */
  url: string;
  /** The BullMQ queue's name: replicas of one service share it (default `tiffin`). */
  queue?: string;
  /** Unfinished (queued and running) tasks over every replica (default 64); past it a submit is 503. */
  maxTasks?: number;
  /** Unfinished tasks one client may hold (default a quarter of `maxTasks`): past it 429. */
  maxClientTasks?: number;
  /** Seconds a finished task's status and answer are kept (default 600). */
  resultTtl?: number;
  /** Most bytes of one task's encoded answer (default 64 MiB); a larger one fails the task with 507. */
  maxResultBytes?: number;
  /**
   * Most bytes the queue's tasks hold in Redis over every replica (default 512 MiB): unfinished tasks' request
   * bodies, kept answers, 1 KiB a task besides. Past it a submit is a 503 `JOBS_FULL` and an answer that does
   * not fit fails its task with 507, until kept answers expire (`HeldBytes`).
   */
  maxHeldBytes?: number;
  /**
   * Milliseconds a claim's lease lasts without a heartbeat (default 5 000; renewed every third of it while this
   * process lives). A task whose lease lapsed is reported queued at once and put back in the queue by BullMQ's
   * stalled-job check (every half lease); keep it above the longest the event loop may be blocked.
   */
  leaseMs?: number;
}

/** What a task's BullMQ job carries: the stored request and its settings. */
interface JobData {
  api: string;
  method: string;
  url: string;
  headers: Array<[string, string]>;
  /** Empty: the body is kept apart (`HeldBytes`); in base64 in a job queued before it was. */
  body: string;
  attempts: number;
  client: string | null;
}

/** How a failed job records its end: `failed` or `cancelled`, with the error body. */
interface Ending {
  status: 'failed' | 'cancelled';
  error: ErrorBody;
}

/** One message on the store's channel: a task event, a cancel, or tasks queued. */
interface Message {
  /** The task's id (empty for `queued`). */
  id: string;
  /** The store that sent it. */
  from: string;
  kind: 'event' | 'cancel' | 'queued';
  event?: TaskEvent;
}

/** Longest a call on Redis may take before it answers 503 (a Redis that hangs rather than refuses). */
const CALL_TIMEOUT_MS = 5000;

/**
 * Longest a claim answers null without asking Redis after one found the queue empty (a backstop: a job that
 * went back to the queue without a `queued` message is still found).
 */
const CLAIM_RECHECK_MS = 1000;

/** A claim's lease when `leaseMs` is not given: a dead replica's task is seen as such within seconds. */
const LEASE_MS = 5000;

/** How often a store counts the processes on its channel (whether a `queued` message has anyone to tell). */
const PEERS_MS = 1000;

/**
 * Readiness: Redis is pinged every `READY_CHECK_MS` on the store's subscriber connection (it carries no large
 * replies), and the store is not ready while a ping has waited longer than `READY_WITHIN_MS` (`AnswerWatch`).
 */
const READY_CHECK_MS = 1000;
const READY_WITHIN_MS = 2000;

/** How long an API's recent run times are kept after its last run (its queued tasks' estimate). */
const RUNS_TTL_MS = 24 * 3600 * 1000;

/** Jobs read per list when `stats` breaks the queue down by API (bounded however long the queue grows). */
const STATS_LIMIT = 10_000;

/**
 * One round trip for `stats`: the waiting and active lists of BullMQ's queue (KEYS), each job's name (the
 * API) read from its hash (ARGV[1] is the job key prefix), counted by name; `[name, waiting, active, ...]`.
 */
const STATS_SCRIPT = `
local counts = {}
local names = {}
for k = 1, 2 do
  local ids = redis.call('LRANGE', KEYS[k], 0, tonumber(ARGV[2]) - 1)
  for _, id in ipairs(ids) do
    local name = redis.call('HGET', ARGV[1] .. id, 'name')
    if name then
      if not counts[name] then counts[name] = {0, 0}; names[#names + 1] = name end
      counts[name][k] = counts[name][k] + 1
    end
  end
end
local out = {}
for _, name in ipairs(names) do
  out[#out + 1] = name; out[#out + 1] = counts[name][1]; out[#out + 1] = counts[name][2]
end
return out
`;

/**
 * A claimed job starts in one round trip: -1 when the task's cancel mark (KEYS[1], member ARGV[1]) is there,
 * else its `started` message (ARGV[3]) goes out on the store's channel (ARGV[2]) and the reply is how many
 * jobs are left to claim (BullMQ's wait list KEYS[2] and prioritized set KEYS[3]).
 */
const START_SCRIPT = `
if redis.call('SISMEMBER', KEYS[1], ARGV[1]) == 1 then return -1 end
redis.call('PUBLISH', ARGV[2], ARGV[3])
return redis.call('LLEN', KEYS[2]) + redis.call('ZCARD', KEYS[3])
`;

/**
 * A task's state in one round trip, read at one instant: the fields of its job's hash (KEYS[1]) that a view needs
 * (`VIEW_FIELDS`; then, when ARGV[5] is `1`, its answer, else whether it has one: 1 or 0) and where the job is.
 * Replies {0, ending} when there is no job (ending: the cancelled-while-queued record in KEYS[4], or nil), {1,
 * fields} when it finished, {2, fields} when it is in the active list (KEYS[2]) under its lock (BullMQ's
 * `<job key>:lock`), else {3, fields, position, recent runs}: its place in the wait list (KEYS[3]: BullMQ pushes
 * at the head and claims from the tail, so the place is the list's length less the job's index, looked for from
 * the tail within ARGV[2] entries) and its API's recent run times (the list ARGV[3] .. its name, ARGV[4] of
 * them). An active job whose lock lapsed (its process stopped) is read as queued at place 1: BullMQ's stalled-job
 * check puts it back at the end the next claim takes from. The job's request (its data) is not read.
 */
const VIEW_SCRIPT = `
local f = redis.call('HMGET', KEYS[1], 'name', 'timestamp', 'progress', 'processedOn', 'finishedOn', 'failedReason')
if not f[1] then return {0, redis.call('HGET', KEYS[4], 'ending')} end
if ARGV[5] == '1' then
  f[7] = redis.call('HGET', KEYS[1], 'returnvalue')
else
  f[7] = redis.call('HEXISTS', KEYS[1], 'returnvalue')
end
if f[5] then return {1, f} end
local runs = ARGV[3] .. f[1]
if redis.call('LPOS', KEYS[2], ARGV[1]) then
  if redis.call('EXISTS', KEYS[1] .. ':lock') == 1 then return {2, f} end
  return {3, f, 1, redis.call('LRANGE', runs, 0, tonumber(ARGV[4]) - 1)}
end
local len = redis.call('LLEN', KEYS[3])
local at = redis.call('LPOS', KEYS[3], ARGV[1], 'RANK', -1, 'MAXLEN', tonumber(ARGV[2]))
local position = len + 1
if at then position = math.max(1, len - at) end
return {3, f, position, redis.call('LRANGE', runs, 0, tonumber(ARGV[4]) - 1)}
`;

/**
 * What `VIEW_SCRIPT` reads of a job's hash, as BullMQ names the fields: its name (the API), when it was added,
 * its progress (JSON), when it started and finished, why it failed; then its answer (JSON) or whether it has one.
 */
type ViewFields = [
  name: string,
  timestamp: string | null,
  progress: string | null,
  processedOn: string | null,
  finishedOn: string | null,
  failedReason: string | null,
  answer: string | number | null,
];

/**
 * After a task's end is written, in one command: a success's run time kept for its API's estimate (ARGV[1], empty
 * for another end: pushed on the list KEYS[1], the most recent ARGV[2] kept for ARGV[3] ms), its client's slot
 * given back (field ARGV[5] of KEYS[2] when ARGV[4] is `1`), its cancel mark (member ARGV[6] of KEYS[3]) gone and
 * its final event (ARGV[8]) sent on the store's channel (ARGV[7]); its bytes given back (`endedLua`).
 */
const ENDED_SCRIPT = `${HELD_LUA}
if ARGV[1] ~= '' then
  redis.call('LPUSH', KEYS[1], ARGV[1])
  redis.call('LTRIM', KEYS[1], 0, tonumber(ARGV[2]) - 1)
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
end
if ARGV[4] == '1' then redis.call('HINCRBY', KEYS[2], ARGV[5], -1) end
redis.call('SREM', KEYS[3], ARGV[6])
redis.call('PUBLISH', ARGV[7], ARGV[8])
${endedLua(4, 9)}
return 0
`;

/** The store's scripts, defined on its commands connection (`EVALSHA`, loaded again when Redis lost them). */
interface StoreScripts {
  tiffinAdmit(...args: Array<string | number | Buffer>): Promise<number>;
  tiffinStart(...args: Array<string | number>): Promise<number>;
  tiffinView(...args: Array<string | number>): Promise<ViewReply>;
  tiffinEnded(...args: Array<string | number>): Promise<number>;
}

/** What `VIEW_SCRIPT` replies. */
type ViewReply = [0, string | null] | [1, ViewFields] | [2, ViewFields] | [3, ViewFields, number, string[]];

/** BullMQ keeps failed jobs' reasons as text: an ending is written as JSON behind this mark. */
const ENDING = 'tiffin-ending:';

/**
 * Tasks in Redis, through BullMQ: every replica (and every `--workers` process) submits to one queue and
 * claims from it, so status, events, results and cancel answer the same from any of them. A claim is a
 * BullMQ job taken by hand (`Worker.getNextJob`) under a lock this process renews; when the process dies the
 * lock lapses and BullMQ's stalled-job check puts the job back in the queue, where the next claim starts it
 * again or, past its `attempts`, fails it with `TASK_INTERRUPTED`. Events and cancels travel on one Redis
 * channel per queue. While Redis is unreachable every call answers 503 `TASK_STORE_UNAVAILABLE` (nothing is
 * acknowledged that was not written) and `notReadyReason` says so; work resumes when it returns.
 */
export class RedisTaskStore implements TaskStore {
  readonly maxResultBytes: number;
  private readonly maxTasks: number;
  private readonly share: number;
  private readonly ttlMs: number;
  private readonly leaseMs: number;
  private readonly channel: string;
  private readonly clientsKey: string;
  /** The bytes the queue's tasks hold, counted over every replica. */
  private readonly held: HeldBytes;
  /** This store's claims: the lock token and heartbeat of each job it runs. */
  private readonly leases = new Map<string, { token: string; job: Job; timer: NodeJS.Timeout }>();
  /**
   * Jobs BullMQ moved to active for this process as it ended the one before (`fetchNext`: no round trip of
   * their own), under that one's lock token; the next claims take them first.
   */
  private readonly prefetched: Array<{ job: Job<JobData>; token: string }> = [];
  private readonly listeners = new Map<string, Set<(event: TaskEvent) => void>>();
  private readonly cancelListeners = new Map<string, Set<() => void>>();
  private readonly queuedListeners = new Set<() => void>();
  private closed = false;
  private readonly self = randomUUID();
  /** Tasks this store ended `TASK_INTERRUPTED` (out of attempts) on a claim, by API (`stats`). */
  private readonly interrupted: Record<string, number> = {};
  /** The queue position last told to this process's subscribers of each queued task. */
  private readonly positions = new Map<string, number>();
  /** Set while a round of queue position events is due (at most one per `POSITION_EVENT_MS`). */
  private positionsTimer: NodeJS.Timeout | undefined;
  /**
   * Whether a claim may find a job: false after one found none, true again on a submit here, a `queued`
   * message from another process, or the periodic look for stalled jobs. A claim while false answers null
   * without asking Redis (the runner asks after every task it ends).
   */
  private maybeQueued = true;
  /** When a claim last asked Redis: past `CLAIM_RECHECK_MS` a claim asks whatever `maybeQueued` says. */
  private askedAt = 0;
  /** Counts the times `maybeQueued` was set: a reply that says none is left clears it only when unchanged. */
  private queuedSignals = 0;
  /** Set while this tick's `queued` message is due (one for the submits of a tick). */
  private queuedDue = false;
  /**
   * Whether another process listens on the store's channel (counted every `PEERS_MS`): alone, a submit tells
   * nobody it queued a task (this process's runner is started by the submit itself).
   */
  private peers = true;
  private peersTimer: NodeJS.Timeout | undefined;
  /** Whether Redis answers in time (`notReadyReason`). */
  private readonly answers: AnswerWatch;

  private constructor(
    private readonly queue: Queue,
    private readonly worker: Worker,
    private readonly commands: Redis,
    private readonly subscriber: Redis,
    private readonly workerConnection: Redis,
    name: string,
    options: RedisTaskStoreOptions,
  ) {
    this.maxTasks = options.maxTasks ?? 64;
    this.share = clientShare(this.maxTasks, options.maxClientTasks);
    this.ttlMs = (options.resultTtl ?? 600) * 1000;
    this.maxResultBytes = options.maxResultBytes ?? 64 * 1024 * 1024;
    this.leaseMs = options.leaseMs ?? LEASE_MS;
    this.channel = `tiffin:${name}:events`;
    this.clientsKey = `tiffin:${name}:clients`;
    const maxHeld = options.maxHeldBytes ?? DEFAULT_MAX_HELD_BYTES;
    this.held = new HeldBytes(commands, name, queue.keys.events as string, this.ttlMs, maxHeld);
    this.answers = new AnswerWatch(() => subscriber.ping(), READY_CHECK_MS, READY_WITHIN_MS);
  }

  private watchPeers(): void {
    const count = () =>
      void this.commands
        .pubsub('NUMSUB', this.channel)
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

  /**
   * A job whose process stopped went back to the queue here (BullMQ's stalled-job check puts it at the end the
   * next claim takes from): this process and the others look for it now, and its followers hear it is queued.
   */
  private requeued(id: string): void {
    this.mayBeQueued();
    this.announceQueued();
    for (const listener of this.queuedListeners) listener();
    void this.publish({ id, kind: 'event', event: queuedEvent(id, 1, null) });
  }

  /** A job may be waiting to be claimed (see `maybeQueued`). */
  private mayBeQueued(): void {
    this.maybeQueued = true;
    this.queuedSignals++;
  }

  private get scripts(): StoreScripts {
    return this.commands as unknown as StoreScripts;
  }

  /** Connect to Redis and the queue; rejects when Redis cannot be reached now. */
  static async open(options: RedisTaskStoreOptions): Promise<RedisTaskStore> {
    const name = options.queue ?? 'tiffin';
    const leaseMs = options.leaseMs ?? LEASE_MS;
    // Calls from requests fail at once while Redis is away (a 503, not a request that hangs); the worker's
    // and the subscriber's connections wait and reconnect.
    const failFast: RedisOptions = {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      lazyConnect: true,
      // A Redis that hangs (not refusing) answers a 503 too, not a request that waits forever.
      commandTimeout: 5000,
      // Not auto-pipelined: measured on the task bench, ioredis's deferral of each command to the next tick
      // and its pipeline per batch cost more CPU than the writes they save (batches are small).
    };
    const waiting: RedisOptions = { maxRetriesPerRequest: null, lazyConnect: true };
    // The store's own commands and the BullMQ Queue's (a submit's add, a cancel's remove) share one connection:
    // more of a tick's commands then leave in one write (`coalesceWrites`). BullMQ's connections are not
    // auto-pipelined either: there a pipeline copies BullMQ's ~50 scripts (~75 µs).
    const commands = new Redis(options.url, failFast);
    const subscriber = new Redis(options.url, waiting);
    const workerConnection = new Redis(options.url, waiting);
    for (const c of [commands, subscriber, workerConnection]) c.on('error', () => {});
    // Commands a tick sends on one connection go out in one write (the subscriber only listens).
    for (const c of [commands, workerConnection]) coalesceWrites(c);
    commands.defineCommand('tiffinAdmit', { numberOfKeys: 10, lua: ADMIT_SCRIPT });
    commands.defineCommand('tiffinStart', { numberOfKeys: 3, lua: START_SCRIPT });
    commands.defineCommand('tiffinView', { numberOfKeys: 4, lua: VIEW_SCRIPT });
    commands.defineCommand('tiffinEnded', { numberOfKeys: 9, lua: ENDED_SCRIPT });
    await Promise.all([commands.connect(), subscriber.connect()]);
    const queue = new Queue(name, { connection: commands, prefix: 'tiffin' });
    const worker = new Worker(name, null, {
      connection: workerConnection,
      prefix: 'tiffin',
      autorun: false,
      lockDuration: leaseMs,
      stalledInterval: Math.max(500, Math.floor(leaseMs / 2)),
      // Attempts are counted by the claim (the job's attemptsStarted), so a stalled job always goes back.
      maxStalledCount: 1_000_000,
    });
    worker.on('error', () => {});
    queue.on('error', () => {});
    const store = new RedisTaskStore(queue, worker, commands, subscriber, workerConnection, name, options);
    subscriber.on('message', (_channel, text: string) => store.received(text));
    // A stalled job this process's check put back in the queue: every process hears it may claim it.
    worker.on('stalled', (id: string) => store.requeued(id));
    await subscriber.subscribe(store.channel);
    store.watchPeers();
    store.answers.start();
    // BullMQ's stalled-job check: jobs whose process died go back to the queue.
    void worker.startStalledCheckTimer().catch(() => {});
    return store;
  }

  notReadyReason(): string | null {
    if (this.closed) return 'the task store is closed';
    if (this.commands.status !== 'ready') return 'Redis (the task store) is unreachable';
    // Connected is not enough: a Redis that hangs keeps its connections open (`AnswerWatch`).
    return this.answers.reason();
  }

  onQueued(listener: () => void): () => void {
    this.queuedListeners.add(listener);
    // A stalled job goes back to the queue without a message: look again now and then.
    const timer = setInterval(
      () => {
        this.mayBeQueued();
        listener();
      },
      Math.max(500, Math.floor(this.leaseMs / 2)),
    );
    timer.unref();
    return () => {
      this.queuedListeners.delete(listener);
      clearInterval(timer);
    };
  }

  async submit(api: string, request: TaskRequest, options: SubmitOptions = {}): Promise<TaskView> {
    return this.reach(async () => {
      const retry = { headers: { 'retry-after': '1' } };
      const client = options.client ?? null;
      const { wait, paused, active, delayed, prioritized } = this.queue.keys;
      const id = randomUUID();
      const body = Buffer.from(request.body.buffer, request.body.byteOffset, request.body.byteLength);
      const verdict = await this.scripts.tiffinAdmit(
        wait as string,
        paused as string,
        active as string,
        delayed as string,
        prioritized as string,
        this.clientsKey,
        ...this.held.admitKeys(id),
        this.maxTasks,
        client === null ? '0' : '1',
        client ?? '',
        this.share,
        ...this.held.admitArgs(id, body),
      );
      if (verdict === 1)
        throw new TasksFull(`${this.maxTasks} tasks are unfinished; retry when one finishes`, retry);
      if (verdict === 2)
        throw new TasksClientFull(`You have ${this.share} unfinished tasks; retry when one finishes`, retry);
      if (verdict === 3)
        throw new TasksFull(
          `The tasks hold the ${this.held.max} bytes this server keeps; retry when one finishes or expires`,
          retry,
        );
      const data: JobData = {
        api,
        method: request.method,
        url: request.url,
        headers: request.headers,
        // Kept apart, raw (`HeldBytes`): not in the job's JSON.
        body: '',
        attempts: Math.max(1, options.attempts ?? 1),
        client,
      };
      try {
        const ttl = Math.ceil(this.ttlMs / 1000);
        await this.queue.add(api, data, {
          jobId: id,
          attempts: 1,
          removeOnComplete: { age: ttl },
          removeOnFail: { age: ttl },
        });
      } catch (err) {
        if (client !== null) await this.commands.hincrby(this.clientsKey, client, -1).catch(() => {});
        await this.held.giveBack(id, false).catch(() => {});
        throw err;
      }
      this.mayBeQueued();
      this.announceQueued();
      return queuedView(id, api, Date.now());
    });
  }

  async claim(): Promise<ClaimedTask | null> {
    return this.reach(async () => {
      if (this.closed) return null;
      let taken = this.prefetched.shift();
      if (!taken) {
        if (!this.maybeQueued && performance.now() - this.askedAt < CLAIM_RECHECK_MS) return null;
        this.askedAt = performance.now();
        const token = randomUUID();
        // Cleared before the look: a submit that lands meanwhile sets it again, and its runner asks again.
        this.maybeQueued = false;
        let next: Job<JobData> | undefined;
        try {
          next = (await this.worker.getNextJob(token, { block: false })) as Job<JobData> | undefined;
        } catch (err) {
          this.mayBeQueued();
          throw err;
        }
        if (!next?.id) return null;
        this.mayBeQueued();
        taken = { job: next, token };
      }
      const { job, token } = taken;
      const id = job.id as string;
      const data = job.data;
      // The stored body, read in the same write as the start's script (`coalesceWrites`).
      const body = this.held.body(id);
      body.catch(() => {});
      const task: ClaimedTask = {
        id,
        api: data.api,
        attempt: job.attemptsStarted,
        request: storedRequest(data, null),
      };
      // A task this claim ends instead of starting is handed over as ended: the runner tells its webhook.
      const ended = (): ClaimedTask => ({ ...task, ended: true });
      if (job.attemptsStarted > data.attempts) {
        task.request = storedRequest(data, await body);
        if (await this.commands.sismember(this.cancelledKey, id)) {
          await this.end(job, token, { status: 'cancelled', error: cancelledBody(id) });
          return ended();
        }
        const error = new TaskInterrupted(
          `task ${id} was running when its server stopped, ${data.attempts} time(s) of the ${data.attempts} it may start`,
        ).toBody();
        await this.end(job, token, { status: 'failed', error });
        this.interrupted[data.api] = (this.interrupted[data.api] ?? 0) + 1;
        return ended();
      }
      const started: Message = {
        id,
        kind: 'event',
        event: { event: 'started', data: { request_id: id, status: 'started' } },
        from: this.self,
      };
      // The cancel mark read, the `started` event sent and the jobs left counted in one round trip.
      const signals = this.queuedSignals;
      const { wait, prioritized } = this.queue.keys;
      const [left, kept] = await Promise.all([
        this.scripts.tiffinStart(
          this.cancelledKey,
          wait as string,
          prioritized as string,
          id,
          this.channel,
          JSON.stringify(started),
        ),
        body,
      ]);
      task.request = storedRequest(data, kept);
      // None left, and no submit or message since the count: the next claim need not ask.
      if (left === 0 && signals === this.queuedSignals) this.maybeQueued = false;
      if (left === -1) {
        await this.end(job, token, { status: 'cancelled', error: cancelledBody(id) });
        return ended();
      }
      const timer = setInterval(
        // A third of the lease: two renewals may be lost (a slow Redis, a busy event loop) before it lapses.
        () => void job.extendLock(token, this.leaseMs).catch(() => {}),
        Math.floor(this.leaseMs / 3),
      );
      timer.unref();
      this.leases.set(id, { token, job, timer });
      return task;
    });
  }

  async progress(id: string, { step, totalSteps, detail }: TaskProgress): Promise<void> {
    const lease = this.leases.get(id);
    if (!lease) return;
    const small = detail && JSON.stringify(detail).length <= MAX_DETAIL_BYTES ? detail : {};
    await lease.job.updateProgress({ step, total_steps: totalSteps });
    await this.publish({
      id,
      kind: 'event',
      event: {
        event: 'step',
        data: { request_id: id, status: 'step', step, total_steps: totalSteps, ...small },
      },
    });
  }

  async complete(id: string, result: TaskResult): Promise<void> {
    const lease = this.leases.get(id);
    if (!lease) return;
    const size = result.body.byteLength;
    if (size > this.maxResultBytes) {
      const tooLarge = new TaskResultTooLarge(
        `The task's answer is ${size} bytes; this server keeps at most ${this.maxResultBytes}`,
      );
      return this.fail(id, tooLarge.toBody());
    }
    // The body is kept apart, raw (`HeldBytes`): BullMQ copies a return value into its events stream.
    const encoded: EncodedAnswer = { status: result.status, headers: result.headers, kept: true };
    const body = Buffer.from(result.body.buffer, result.body.byteOffset, result.body.byteLength);
    const full: Ending = {
      status: 'failed',
      error: new TaskResultTooLarge(
        `The task's answer (${size} bytes) does not fit in the ${this.held.max} bytes the other tasks leave`,
      ).toBody(),
    };
    /** Whether the answer fits beside the bytes the other tasks hold (asked once, before the job completes). */
    let fits: boolean | undefined;
    const started = lease.job.processedOn ?? Date.now();
    // The next queued job comes back with this one's end when this process's runner claims (it does so as
    // soon as this returns), and a job may be queued.
    const fetchNext = this.queuedListeners.size > 0 && this.maybeQueued;
    const signals = this.queuedSignals;
    const write = async () => {
      fits ??= await this.held.keep(id, body);
      if (!fits) return lease.job.moveToFailed(new Error(ENDING + JSON.stringify(full)), lease.token, false);
      const next = await lease.job.moveToCompleted(encoded, lease.token, fetchNext);
      const [fields, nextId] = Array.isArray(next) ? next : [];
      if (fields && typeof nextId === 'string')
        this.prefetched.push({ job: Job.fromJSON(this.worker, fields, nextId), token: lease.token });
      else if (fetchNext && signals === this.queuedSignals) this.maybeQueued = false;
    };
    if (await this.settle(id, write)) {
      const seconds = (Date.now() - started) / 1000;
      await this.ended(lease.job, fits ? { status: 'succeeded', seconds } : full).catch(() => {});
    }
  }

  async fail(id: string, error: ErrorBody, status: 'failed' | 'cancelled' = 'failed'): Promise<void> {
    const lease = this.leases.get(id);
    if (!lease) return;
    const ending: Ending = { status, error };
    const written = await this.settle(id, () =>
      lease.job.moveToFailed(new Error(ENDING + JSON.stringify(ending)), lease.token, false),
    );
    // Once only: a retried write must not give the client's slot back twice.
    if (written) await this.ended(lease.job, ending).catch(() => {});
  }

  async cancel(id: string): Promise<CancelAnswer> {
    return this.reach(async () => {
      const view = await this.status(id);
      if (FINAL_STATUSES.has(view.status)) return view;
      // The mark is read by the next claim (a queued task) and by the runner's process (a running one).
      await this.commands.sadd(this.cancelledKey, id);
      for (const listener of this.cancelListeners.get(id) ?? []) listener();
      await this.publish({ id, kind: 'cancel' });
      if (view.status === 'queued') {
        const job = (await Job.fromId(this.queue, id)) as Job<JobData> | undefined;
        // Removed while waiting (not claimed): it ends cancelled now, as in the other stores.
        if (job && (await job.getState()) === 'waiting' && (await removed(job))) {
          const ending = { ...cancelledEnding(id), at: Date.now(), api: view.api };
          await this.commands.hset(this.endedKey(id), 'ending', JSON.stringify(ending));
          await this.commands.pexpire(this.endedKey(id), this.ttlMs);
          const body = await this.held.body(id);
          await this.held.giveBack(id, true);
          await this.release(job.data.client);
          const ended = { ...view, ...finalTimes(Date.now(), this.ttlMs), status: 'cancelled' as const };
          ended.error = cancelledBody(id);
          await this.publish({ id, kind: 'event', event: finalEvent(ended) });
          // Only the cancel whose remove took the job gets here: it alone tells the task's webhook.
          return { ...ended, queuedRequest: storedRequest(job.data, body) };
        }
      }
      return this.status(id);
    });
  }

  async status(id: string): Promise<TaskView> {
    return this.reach(async () => (await this.read(id)).view);
  }

  async result(id: string): Promise<TaskResult> {
    return this.reach(async () => {
      const { view, result } = await this.read(id, true);
      if (view.status === 'succeeded' && result) return result;
      throw new TaskNotDone(`task ${id} is ${view.status}; its result is available once it has succeeded`, {
        detail: { ...view },
      });
    });
  }

  async *events(id: string, signal: AbortSignal): AsyncGenerator<TaskEvent> {
    let listeners = this.listeners.get(id);
    if (!listeners) {
      listeners = new Set();
      this.listeners.set(id, listeners);
    }
    const own = listeners;
    // Listen before reading the state, so no event falls between the two; the events heard meanwhile
    // follow the first one.
    const early: TaskEvent[] = [];
    const keep = (event: TaskEvent) => early.push(event);
    own.add(keep);
    const unsubscribe = (listener: (event: TaskEvent) => void) => {
      own.delete(listener);
      if (own.size === 0) {
        this.listeners.delete(id);
        this.positions.delete(id);
      }
    };
    try {
      const view = await this.status(id);
      if (FINAL_STATUSES.has(view.status)) {
        yield { event: view.status, data: { ...view } };
        return;
      }
      // A task that started while its state was read was queued when the stream opened.
      if (view.queue_position !== undefined) this.positions.set(id, view.queue_position);
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

  /** Waiting and running tasks by API, from BullMQ's lists in one bounded script (what `/metrics` shows). */
  async stats(): Promise<TaskStoreStats> {
    return this.reach(async () => {
      const { wait, active } = this.queue.keys;
      const flat = (await this.commands.eval(
        STATS_SCRIPT,
        2,
        wait as string,
        active as string,
        this.queue.toKey(''),
        STATS_LIMIT,
      )) as Array<string | number>;
      const unfinished: TaskStoreStats['unfinished'] = {};
      for (let k = 0; k + 2 < flat.length; k += 3)
        unfinished[String(flat[k])] = { queued: Number(flat[k + 1]), running: Number(flat[k + 2]) };
      return { unfinished, interrupted: { ...this.interrupted } };
    });
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

  async expire(): Promise<number> {
    return this.reach(async () => {
      const grace = this.ttlMs;
      const done = await this.queue.clean(grace, 1000, 'completed');
      const failed = await this.queue.clean(grace, 1000, 'failed');
      return done.length + failed.length;
    });
  }

  /**
   * Stop claiming; the tasks this process runs go back to the queue at once (`handBack`, the default), or are
   * left to lapse as a killed process leaves them.
   */
  async close(handBack = true): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.peersTimer);
    this.answers.stop();
    const handedBack = handBack && this.leases.size + this.prefetched.length > 0;
    for (const { job, token } of this.prefetched.splice(0))
      if (handBack) await job.moveToWait(token).catch(() => {});
    for (const [id, lease] of this.leases) {
      clearInterval(lease.timer);
      if (handBack) await lease.job.moveToWait(lease.token).catch(() => {});
      this.leases.delete(id);
    }
    // The other processes claim what went back now, not at their next periodic look.
    if (handedBack) await this.publish({ id: '', kind: 'queued' });
    await Promise.allSettled([this.worker.close(true), this.queue.close()]);
    // BullMQ leaves connections it was given open: every one of this store's goes.
    for (const connection of [this.subscriber, this.commands, this.workerConnection]) connection.disconnect();
  }

  private get cancelledKey(): string {
    return `${this.channel}:cancelled`;
  }

  private endedKey(id: string): string {
    return `${this.channel}:ended:${id}`;
  }

  /**
   * The task's view from its job (or its ending, for a cancel that removed a waiting job), and its answer when
   * `withAnswer`, read in one round trip (`VIEW_SCRIPT`); the fields are parsed as BullMQ parses them
   * (`Job.fromJSON`), the job's request left unread.
   */
  private async read(id: string, withAnswer = false): Promise<{ view: TaskView; result: TaskResult | null }> {
    const notFound = () =>
      new TaskNotFound(`no task ${truncateForMessage(id)} (unknown, or its result expired)`);
    if (id.length > 128) throw notFound();
    const { active, wait } = this.queue.keys;
    const replying = this.scripts.tiffinView(
      this.queue.toKey(id),
      active as string,
      wait as string,
      this.endedKey(id),
      id,
      this.maxTasks + 1,
      `${this.channel}:runs:`,
      RECENT_RUNS,
      withAnswer ? '1' : '0',
    );
    // Sent after the view's script (the same write): an answer it finds completed is there to read.
    const kept = withAnswer ? this.held.answer(id) : null;
    kept?.catch(() => {});
    const reply = await replying;
    if (reply[0] === 0) {
      if (!reply[1]) throw notFound();
      const parsed = JSON.parse(reply[1]) as Ending & { at: number; api: string };
      return { view: endedView(id, parsed, this.ttlMs), result: null };
    }
    const [name, timestamp, progressJson, processedOn, finishedOn, failedReason, answer] = reply[1];
    const progress = jsonOrNull(progressJson);
    const steps = (progress !== null && typeof progress === 'object' ? progress : {}) as {
      step?: number;
      total_steps?: number | null;
    };
    const view = queuedView(id, name, Number.parseInt(timestamp ?? '0', 10));
    view.step = steps.step ?? 0;
    view.total_steps = steps.total_steps ?? null;
    if (reply[0] === 1) {
      const finished = Number.parseInt(finishedOn ?? '0', 10);
      if (finished + this.ttlMs <= Date.now()) throw notFound();
      Object.assign(view, finalTimes(finished, this.ttlMs));
      const ending = parseEnding(failedReason ?? undefined);
      if (ending) {
        view.status = ending.status;
        view.error = ending.error;
        return { view, result: null };
      }
      const r = withAnswer ? (jsonOrNull(answer) as EncodedAnswer | null) : null;
      if (withAnswer ? r : answer === 1) {
        view.status = 'succeeded';
        if (!r) return { view, result: null };
        const body = r.kept ? await kept : Buffer.from(r.body ?? '', 'base64');
        // Kept apart, the answer expired a moment before the job's time to live ran out.
        if (!body) throw notFound();
        return { view, result: { status: r.status, headers: r.headers, body } };
      }
      view.status = 'failed';
      view.error = new TaskInterrupted(`task ${id} ended without an answer`).toBody();
      return { view, result: null };
    }
    if (reply[0] === 2) {
      view.status = 'running';
      const started = Number.parseInt(processedOn ?? '0', 10);
      if (started) view.eta_seconds = runningEta(view.step, view.total_steps, (Date.now() - started) / 1000);
      return { view, result: null };
    }
    // Waiting, at its place from 1 (`VIEW_SCRIPT`).
    view.step = 0;
    const [, , position, runs] = reply;
    view.queue_position = position;
    view.eta_seconds = queuedEta(position, runs.map(Number));
    return { view, result: null };
  }

  private runsKey(api: string): string {
    return `${this.channel}:runs:${api}`;
  }

  /**
   * A task left the queue (it started, or ended while queued): the queued tasks this process's clients follow
   * hear their new place, in one round at most every `POSITION_EVENT_MS`, a status read each.
   */
  private announcePositions(): void {
    if (this.positionsTimer || this.listeners.size === 0 || this.closed) return;
    this.positionsTimer = setTimeout(() => {
      this.positionsTimer = undefined;
      void this.refreshPositions().catch(() => {});
    }, POSITION_EVENT_MS);
    this.positionsTimer.unref();
  }

  private async refreshPositions(): Promise<void> {
    for (const id of [...this.listeners.keys()]) {
      if (!this.positions.has(id)) continue;
      const view = await this.status(id);
      const position = view.queue_position;
      if (position === undefined || this.positions.get(id) === position || !this.listeners.has(id)) continue;
      this.positions.set(id, position);
      for (const listener of this.listeners.get(id) ?? [])
        listener(queuedEvent(id, position, view.eta_seconds));
    }
  }

  /** End a claimed job as failed or cancelled, give its client's slot back, tell the listeners. */
  private async end(job: Job<JobData>, token: string, ending: Ending): Promise<void> {
    await job.moveToFailed(new Error(ENDING + JSON.stringify(ending)), token, false);
    await this.ended(job, ending);
  }

  /**
   * After a task's end is written: its client's slot back, its cancel mark gone, a success's run time kept for
   * its API's estimate (the most recent `RECENT_RUNS`, shared by every replica) and its final event sent, in one
   * command (`ENDED_SCRIPT`).
   */
  private async ended(
    job: Job<JobData>,
    ending: Ending | { status: 'succeeded'; seconds: number },
  ): Promise<void> {
    const id = job.id as string;
    let event: TaskEvent;
    if (ending.status === 'succeeded') {
      event = { event: 'done', data: { request_id: id, status: 'done', seconds: ending.seconds } };
    } else {
      const view = { ...queuedView(id, job.data.api, job.timestamp), ...finalTimes(Date.now(), this.ttlMs) };
      view.status = ending.status;
      view.error = ending.error;
      event = finalEvent(view);
    }
    const sent: Message = { id, kind: 'event', event, from: this.self };
    const { client } = job.data;
    await this.scripts.tiffinEnded(
      this.runsKey(job.data.api),
      this.clientsKey,
      this.cancelledKey,
      ...this.held.endKeys(id),
      ending.status === 'succeeded' ? ending.seconds.toFixed(3) : '',
      RECENT_RUNS,
      RUNS_TTL_MS,
      client === null ? '0' : '1',
      client ?? '',
      id,
      this.channel,
      JSON.stringify(sent),
      ...this.held.endArgs(id, ending.status === 'succeeded'),
    );
  }

  /**
   * Settle a claimed task, retrying while Redis is away (up to a lease's time): an answer is not dropped for
   * a short outage. Past that the lease has lapsed and the task will run again elsewhere. Resolves whether
   * it was written.
   */
  private async settle(id: string, write: () => Promise<unknown>): Promise<boolean> {
    const lease = this.leases.get(id);
    if (!lease) return false;
    clearInterval(lease.timer);
    this.leases.delete(id);
    const deadline = Date.now() + this.leaseMs;
    for (;;) {
      try {
        await write();
        break;
      } catch (err) {
        if (err instanceof TiffinError || Date.now() > deadline || this.closed) return false;
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    }
    return true;
  }

  private async release(client: string | null): Promise<void> {
    if (client !== null) await this.commands.hincrby(this.clientsKey, client, -1);
  }

  /**
   * Tell the other processes that tasks are queued: one message for the submits of a tick, sent after their
   * writes (not awaited: the submit is acknowledged by its write, and a process that misses it looks again on
   * its own now and then).
   */
  private announceQueued(): void {
    if (this.queuedDue || !this.peers) return;
    this.queuedDue = true;
    setImmediate(() => {
      this.queuedDue = false;
      void this.publish({ id: '', kind: 'queued' });
    });
  }

  private async publish(message: Omit<Message, 'from'>): Promise<void> {
    const sent: Message = { ...message, from: this.self };
    await this.commands.publish(this.channel, JSON.stringify(sent)).catch(() => {});
  }

  private received(text: string): void {
    let message: Message;
    try {
      message = JSON.parse(text) as Message;
    } catch {
      return;
    }
    if (message.kind === 'queued') {
      // This process's own submits start its runner already: a second look would only find nothing.
      if (message.from !== this.self) {
        this.mayBeQueued();
        for (const listener of this.queuedListeners) listener();
      }
    } else if (message.kind === 'cancel') {
      // Only the process that runs the task acts on it (the one that cancelled already told its own).
      if (message.from !== this.self && this.leases.has(message.id))
        for (const listener of this.cancelListeners.get(message.id) ?? []) listener();
    } else if (message.event) {
      if (message.event.event !== 'queued') this.positions.delete(message.id);
      for (const listener of this.listeners.get(message.id) ?? []) listener(message.event);
      if (message.event.event === 'started' || isFinalEvent(message.event)) this.announcePositions();
    }
  }

  /** Run a call on Redis; a lost connection is a 503 `TASK_STORE_UNAVAILABLE` with `Retry-After`. */
  private async reach<T>(call: () => Promise<T>): Promise<T> {
    if (this.closed)
      throw new TaskStoreUnavailable('The task store is closed', { headers: { 'retry-after': '1' } });
    const unavailable = () =>
      new TaskStoreUnavailable('The task store (Redis) cannot be reached; retry shortly', {
        headers: { 'retry-after': '2' },
      });
    // BullMQ waits for a connection to come back: a call made while it is away answers now instead.
    if (this.commands.status !== 'ready') throw unavailable();
    let timer: NodeJS.Timeout | undefined;
    try {
      return await Promise.race([
        call(),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(unavailable()), CALL_TIMEOUT_MS);
        }),
      ]);
    } catch (err) {
      if (err instanceof TiffinError) throw err;
      throw unavailable();
    } finally {
      clearTimeout(timer);
    }
  }
}

function queuedView(id: string, api: string, createdMs: number): TaskView {
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

function finalTimes(at: number, ttlMs: number): Pick<TaskView, 'finished_at' | 'expires_at'> {
  return { finished_at: new Date(at).toISOString(), expires_at: new Date(at + ttlMs).toISOString() };
}

function endedView(id: string, ending: Ending & { at: number; api: string }, ttlMs: number): TaskView {
  return {
    ...queuedView(id, ending.api, ending.at),
    ...finalTimes(ending.at, ttlMs),
    status: ending.status,
    error: ending.error,
  };
}

function finalEvent(view: TaskView): TaskEvent {
  return {
    event: view.status,
    data: { request_id: view.id, status: view.status, error: view.error?.error, code: view.error?.code },
  };
}

/**
 * A task's answer as its job keeps it (BullMQ's `returnvalue`): `kept`, its body is kept apart (`HeldBytes`);
 * else (a job that ended before bodies were kept apart) the body is here, in base64.
 */
interface EncodedAnswer {
  status: number;
  headers: Array<[string, string]>;
  kept?: true;
  body?: string;
}

/** JSON that BullMQ wrote, or null when absent or not JSON (BullMQ reads a corrupt return value as none). */
function jsonOrNull(text: string | number | null): unknown {
  if (typeof text !== 'string') return null;
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

function parseEnding(reason: string | undefined): Ending | null {
  if (!reason?.startsWith(ENDING)) return null;
  try {
    return JSON.parse(reason.slice(ENDING.length)) as Ending;
  } catch {
    return null;
  }
}

/**
 * The request a task's job keeps, as it was submitted, with its body as kept apart (`HeldBytes`; in the job's
 * data, base64, for a job queued before bodies were kept apart).
 */
function storedRequest(data: JobData, body: Buffer | null): TaskRequest {
  return {
    method: data.method,
    url: data.url,
    headers: data.headers,
    body: body ?? Buffer.from(data.body, 'base64'),
  };
}

function cancelledBody(id: string): ErrorBody {
  return new Cancelled(`task ${id} was cancelled before it started`).toBody();
}

function cancelledEnding(id: string): Ending {
  return { status: 'cancelled', error: cancelledBody(id) };
}

/** Remove a waiting job; false when it was claimed meanwhile (it is locked then). */
async function removed(job: Job): Promise<boolean> {
  try {
    await job.remove();
    return true;
  } catch {
    return false;
  }
}
