import type { TaskStoreStats } from '@tiffin/core/tasks';
import { JOB_FIELDS, jobKeyPrefix, waitAndActiveKeys } from './bullmq-assumptions.js';
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
