import { clientShare } from '@tiffin/core/tasks';
import { DEFAULT_MAX_HELD_BYTES } from './held-bytes.js';

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

/** A claim's lease when `leaseMs` is not given: a dead replica's task is seen as such within seconds. */
const LEASE_MS = 5000;

/** The options with their defaults, as every part of a store reads them. */
export interface StoreSettings {
  /** The queue's name. */
  name: string;
  maxTasks: number;
  /** Unfinished tasks one client may hold. */
  share: number;
  /** How long a finished task is kept, ms. */
  ttlMs: number;
  leaseMs: number;
  maxResultBytes: number;
  maxHeldBytes: number;
}

export function storeSettings(options: RedisTaskStoreOptions): StoreSettings {
  const maxTasks = options.maxTasks ?? 64;
  return {
    name: options.queue ?? 'tiffin',
    maxTasks,
    share: clientShare(maxTasks, options.maxClientTasks),
    ttlMs: (options.resultTtl ?? 600) * 1000,
    leaseMs: options.leaseMs ?? LEASE_MS,
    maxResultBytes: options.maxResultBytes ?? 64 * 1024 * 1024,
    maxHeldBytes: options.maxHeldBytes ?? DEFAULT_MAX_HELD_BYTES,
  };
}
