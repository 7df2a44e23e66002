import type { TaskStoreStats } from '@tiffin/core/tasks';
import {
  JOB_FIELDS,
  jobKey,
  jobKeyPrefix,
  WAIT_LIST_ORDER,
  waitAndActiveKeys,
} from './bullmq-assumptions.js';
import type { StoreContext } from './store-context.js';

/** Jobs read per list when `stats` breaks the queue down by API (bounded however long the queue grows). */
const STATS_LIMIT = 10_000;

/**
 * Waiting and running tasks by API, from BullMQ's lists in one bounded script (`stats-2.lua`, what `/metrics`
 * shows), and the tasks this store ended `TASK_INTERRUPTED` on a claim.
 */
export async function queueStats(
  ctx: StoreContext,
  interrupted: Record<string, number>,
): Promise<TaskStoreStats> {
  const flat = await ctx.scripts.tiffinStats(
    ...waitAndActiveKeys(ctx.queue),
    jobKeyPrefix(ctx.queue),
    STATS_LIMIT,
    JOB_FIELDS.name,
  );
  const unfinished: TaskStoreStats['unfinished'] = {};
  for (let k = 0; k + 2 < flat.length; k += 3)
    unfinished[String(flat[k])] = { queued: Number(flat[k + 1]), running: Number(flat[k + 2]) };
  return { unfinished, interrupted: { ...interrupted } };
}

/**
 * When the job claimed next was added (ms since the epoch), or null with none waiting: the wait list's claim end
 * (`WAIT_LIST_ORDER`), then that job's `timestamp`. A job claimed in between reads as none or the next one.
 */
export async function oldestQueuedAt(ctx: StoreContext): Promise<number | null> {
  const [wait] = waitAndActiveKeys(ctx.queue);
  const redis = ctx.connections.commands;
  const id = await redis.lindex(wait, WAIT_LIST_ORDER.claimedFrom === 'tail' ? -1 : 0);
  if (id === null) return null;
  const added = await redis.hget(jobKey(ctx.queue, id), JOB_FIELDS.timestamp);
  return added === null ? null : Number(added);
}
