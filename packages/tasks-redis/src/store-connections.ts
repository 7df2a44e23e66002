import { TiffinError } from '@tiffin/core';
import { TaskStoreUnavailable } from '@tiffin/core/tasks';
import { Redis, type RedisOptions } from 'ioredis';
import { AnswerWatch } from './answer-watch.js';
import { coalesceWrites } from './coalesced-writes.js';

/** Longest a call on Redis may take before it answers 503 (a Redis that hangs rather than refuses). */
const CALL_TIMEOUT_MS = 5000;

/**
 * Readiness: Redis is pinged every `READY_CHECK_MS` on the store's subscriber connection (it carries no large
 * replies), and the store is not ready while a ping has waited longer than `READY_WITHIN_MS` (`AnswerWatch`).
 */
const READY_CHECK_MS = 1000;
const READY_WITHIN_MS = 2000;

/**
 * A store's three connections to Redis, whether it answers, and whether the store is closed. Calls from requests
 * (`commands`, shared with BullMQ's Queue) fail at once while Redis is away, a 503 rather than a request that
 * hangs; the worker's and the subscriber's connections wait and reconnect.
 */
export class StoreConnections {
  /** Set by the store's `close`: every call answers 503 from then on. */
  closed = false;
  /** Whether Redis answers in time (`notReadyReason`). */
  private readonly answers: AnswerWatch;

  private constructor(
    /** The store's own commands and the BullMQ Queue's (a submit's add, a cancel's remove). */
    readonly commands: Redis,
    /** The store's channel (it only listens) and the readiness pings. */
    readonly subscriber: Redis,
    /** BullMQ's Worker: claims, their locks, the stalled-job check. */
    readonly worker: Redis,
  ) {
    this.answers = new AnswerWatch(() => subscriber.ping(), READY_CHECK_MS, READY_WITHIN_MS);
  }

  /** The connections to `url`, the commands' and the subscriber's connected; rejects when Redis cannot be reached. */
  static async open(url: string): Promise<StoreConnections> {
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
    // The store's own commands and the BullMQ Queue's share one connection: more of a tick's commands then leave
    // in one write (`coalesceWrites`). BullMQ's connections are not auto-pipelined either: there a pipeline
    // copies BullMQ's ~50 scripts (~75 µs).
    const commands = new Redis(url, failFast);
    const subscriber = new Redis(url, waiting);
    const worker = new Redis(url, waiting);
    for (const c of [commands, subscriber, worker]) c.on('error', () => {});
    // Commands a tick sends on one connection go out in one write (the subscriber only listens).
    for (const c of [commands, worker]) coalesceWrites(c);
    const connections = new StoreConnections(commands, subscriber, worker);
    await Promise.all([commands.connect(), subscriber.connect()]);
    return connections;
  }

  /** Start watching whether Redis answers. */
  watch(): void {
    this.answers.start();
  }

  notReadyReason(): string | null {
    if (this.closed) return 'the task store is closed';
    if (this.commands.status !== 'ready') return 'Redis (the task store) is unreachable';
    // Connected is not enough: a Redis that hangs keeps its connections open (`AnswerWatch`).
    return this.answers.reason();
  }

  /** Run a call on Redis; a lost connection is a 503 `TASK_STORE_UNAVAILABLE` with `Retry-After`. */
  async reach<T>(call: () => Promise<T>): Promise<T> {
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

  /** Stop the readiness pings (the store is closing). */
  stopWatching(): void {
    this.answers.stop();
  }

  /** BullMQ leaves connections it was given open: every one of the store's goes. */
  disconnect(): void {
    for (const connection of [this.subscriber, this.commands, this.worker]) connection.disconnect();
  }
}
