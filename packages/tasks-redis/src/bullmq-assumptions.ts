import type { Job, Queue } from 'bullmq';

/**
 * Every assumption the store makes about BullMQ beyond its public API: the keys of a queue, the fields of a job's
 * hash, the lock key, the order of the wait list, the events stream and one reply's shape. The store's code and
 * its scripts (`commands/*.lua`, which get these names as KEYS and ARGV) take them from here, and
 * `test/bullmq-assumptions.test.ts` drives a real Queue and Worker and checks each, so a BullMQ upgrade that breaks
 * one fails there, not in production. The version is pinned in `package.json`; upgrade it with that test.
 */

/** The prefix the store gives BullMQ's Queue and Worker: a queue's keys are `tiffin:<queue>:<name>`. */
export const BULLMQ_PREFIX = 'tiffin';

/**
 * A queue's unfinished jobs, as `Queue.getJobCounts` counts them: `wait`, `paused` and `active` are lists of job
 * ids, `delayed` and `prioritized` sorted sets, in this order (`admit-10.lua` counts them with LLEN, then ZCARD).
 */
export function unfinishedJobKeys(queue: Queue): [string, string, string, string, string] {
  const { wait, paused, active, delayed, prioritized } = queue.keys;
  return [wait, paused, active, delayed, prioritized] as [string, string, string, string, string];
}

/** The jobs left to claim: the wait list and the prioritized sorted set (`start-4.lua` counts them). */
export function claimableJobKeys(queue: Queue): [wait: string, prioritized: string] {
  const { wait, prioritized } = queue.keys;
  return [wait as string, prioritized as string];
}

/** The lists `stats-2.lua` and `view-5.lua` read: waiting jobs and the jobs a worker holds. */
export function waitAndActiveKeys(queue: Queue): [wait: string, active: string] {
  const { wait, active } = queue.keys;
  return [wait as string, active as string];
}

/**
 * The wait list's order: a job is added at its head (LPUSH), claimed from its tail (RPOPLPUSH into `active`), and
 * a stalled job goes back at its tail (RPUSH), claimed next. So a waiting job's place is counted from the tail
 * (`view-5.lua`), and a job whose lock lapsed is read as first in line.
 */
export const WAIT_LIST_ORDER = { addedAt: 'head', claimedFrom: 'tail', stalledBackAt: 'tail' } as const;

/** A job's hash, `tiffin:<queue>:<id>`. */
export function jobKey(queue: Queue, id: string): string {
  return queue.toKey(id);
}

/** The prefix of every job's hash: the hash of job `id` is this followed by `id` (`stats-2.lua`). */
export function jobKeyPrefix(queue: Queue): string {
  return queue.toKey('');
}

/** A claimed job's lock: the claim's token while its lease lasts, gone once it lapsed (`view-5.lua`). */
export function lockKey(job: string): string {
  return `${job}:lock`;
}

/** The fields of a job's hash the store reads, as BullMQ writes them. */
export const JOB_FIELDS = {
  /** The job's name: the task's API. */
  name: 'name',
  /** When it was added, ms since the epoch. */
  timestamp: 'timestamp',
  /** The JSON of its last `updateProgress` (the task's step). */
  progress: 'progress',
  /** When it last moved to active, ms. */
  processedOn: 'processedOn',
  /** When it completed or failed, ms; absent until then. */
  finishedOn: 'finishedOn',
  /** The message of the error `moveToFailed` was given, verbatim (the store's ending, `ENDING`). */
  failedReason: 'failedReason',
  /** The JSON of the value `moveToCompleted` was given (the answer's status and headers). */
  returnvalue: 'returnvalue',
  /** The JSON of its data (the stored request), read through `Job`. */
  data: 'data',
  /**
   * How many times it moved to active (`ats`, read as `Job.attemptsStarted`): 1 at its first claim, one more at
   * each claim after a stall, so a claim knows how many times its task started (`TaskClaims`).
   */
  attemptsStarted: 'ats',
} as const;

/** What `view-5.lua` reads of a job's hash (ARGV 6-11), then its answer or whether it has one (ARGV[12]). */
export const VIEW_FIELDS = [
  JOB_FIELDS.name,
  JOB_FIELDS.timestamp,
  JOB_FIELDS.progress,
  JOB_FIELDS.processedOn,
  JOB_FIELDS.finishedOn,
  JOB_FIELDS.failedReason,
  JOB_FIELDS.returnvalue,
] as const;

/**
 * The queue's events stream (`tiffin:<queue>:events`): BullMQ adds an entry per event with an id from Redis's clock
 * in ms, so the entries older than a time go with `XTRIM MINID` (`endedHeld`); a `completed` entry carries the
 * job's `returnvalue`, which is why an answer's body is kept apart.
 */
export function eventsStreamKey(queue: Queue): string {
  return queue.keys.events as string;
}

/**
 * What `Job.moveToCompleted(value, token, true)` answers when it moved the next job to active for the same worker:
 * `[fields, id, ...]`, that job's hash as an object and its id (what `Job.fromJSON` takes); no id when none.
 */
export function nextJobOf(reply: unknown): { fields: NextJobFields; id: string } | undefined {
  const [fields, id] = Array.isArray(reply) ? reply : [];
  if (!fields || typeof id !== 'string') return undefined;
  return { fields: fields as NextJobFields, id };
}

/** A job's hash as `Job.fromJSON` takes it. */
type NextJobFields = Parameters<typeof Job.fromJSON>[1];
