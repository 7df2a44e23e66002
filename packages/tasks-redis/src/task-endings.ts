import {
  type CancelAnswer,
  FINAL_STATUSES,
  queuedView,
  RECENT_RUNS,
  type TaskEvent,
} from '@tiffin/core/tasks';
import { Job } from 'bullmq';
import { jobKey } from './bullmq-assumptions.js';
import {
  cancelledBody,
  cancelledEnding,
  type Ending,
  endingError,
  type JobData,
  storedRequest,
} from './job-records.js';
import type { StoreChannel } from './store-channel.js';
import type { StoreContext } from './store-context.js';
import { readTask } from './task-reads.js';
import { finalEvent, finalTimes } from './task-views.js';

/** How long an API's recent run times are kept after its last run (its queued tasks' estimate). */
const RUNS_TTL_MS = 24 * 3600 * 1000;

/**
 * A task's end as `ended` takes it: failed or cancelled with its error, or succeeded after `seconds`, its answer
 * kept apart or, `inlineBytes` long, in its job.
 */
export type TaskEnd = Ending | { status: 'succeeded'; seconds: number; inlineBytes?: number | undefined };

/**
 * How tasks end and what is kept of it: a claimed job ended as failed or cancelled, the bookkeeping after any
 * end (`ended-10.lua`: the client's slot, the cancel mark, the run time, the bytes, the final event), and a
 * cancel, which ends a task still waiting in the queue itself.
 */
export class TaskEndings {
  constructor(
    private readonly ctx: StoreContext,
    private readonly channel: StoreChannel,
  ) {}

  /** End a claimed job as failed or cancelled, give its client's slot back, tell the listeners. */
  async end(job: Job<JobData>, token: string, ending: Ending): Promise<void> {
    await job.moveToFailed(endingError(ending), token, false);
    await this.ended(job, ending);
  }

  /**
   * After a task's end is written: its client's slot back, its cancel mark gone, a success's run time kept for
   * its API's estimate (the most recent `RECENT_RUNS`, shared by every replica) and its final event sent, in one
   * command (`ended-10.lua`), sent on `via` (the commands connection, or the Worker's behind a completion). It acts
   * once the job has finished, and once a job: answers 1 when it arrived before the job's end (nothing done).
   */
  async ended(job: Job<JobData>, ending: TaskEnd, via = this.ctx.scripts): Promise<0 | 1 | 2> {
    const { keys, held, settings } = this.ctx;
    const id = job.id as string;
    let event: TaskEvent;
    if (ending.status === 'succeeded') {
      event = { event: 'done', data: { request_id: id, status: 'done', seconds: ending.seconds } };
    } else {
      const view = {
        ...queuedView(id, job.data.api, job.timestamp),
        ...finalTimes(Date.now(), settings.ttlMs),
      };
      view.status = ending.status;
      view.error = ending.error;
      event = finalEvent(view);
    }
    const { client } = job.data;
    return via.tiffinEnded(
      keys.runs(job.data.api),
      keys.clients,
      keys.cancelled,
      ...held.endKeys(id),
      jobKey(this.ctx.queue, id),
      ending.status === 'succeeded' ? ending.seconds.toFixed(3) : '',
      RECENT_RUNS,
      RUNS_TTL_MS,
      client === null ? '0' : '1',
      client ?? '',
      id,
      keys.channel,
      this.channel.encode({ id, kind: 'event', event }),
      ...held.endArgs(id, ending.status === 'succeeded' ? (ending.inlineBytes ?? 'kept') : null),
    );
  }

  /**
   * Cancel task `id`: its mark, read by the next claim (a queued task) and by the runner's process (a running
   * one), its listeners told; a task still waiting is removed from the queue and ends cancelled now.
   */
  async cancel(id: string): Promise<CancelAnswer> {
    const { ctx } = this;
    const { view } = await readTask(ctx, id);
    if (FINAL_STATUSES.has(view.status)) return view;
    await ctx.connections.commands.sadd(ctx.keys.cancelled, id);
    this.channel.tellCancelled(id);
    await this.channel.publish({ id, kind: 'cancel' });
    if (view.status === 'queued') {
      const job = (await Job.fromId(ctx.queue, id)) as Job<JobData> | undefined;
      // Removed while waiting (not claimed): it ends cancelled now, as in the other stores.
      if (job && (await job.getState()) === 'waiting' && (await removed(job))) {
        const { commands } = ctx.connections;
        const ending = { ...cancelledEnding(id), at: Date.now(), api: view.api };
        await commands.hset(ctx.keys.ended(id), 'ending', JSON.stringify(ending));
        await commands.pexpire(ctx.keys.ended(id), ctx.settings.ttlMs);
        const body = await ctx.held.body(id);
        await ctx.held.giveBack(id, true);
        await this.release(job.data.client);
        const ended = {
          ...view,
          ...finalTimes(Date.now(), ctx.settings.ttlMs),
          status: 'cancelled' as const,
        };
        ended.error = cancelledBody(id);
        await this.channel.publish({ id, kind: 'event', event: finalEvent(ended) });
        // Only the cancel whose remove took the job gets here: it alone tells the task's webhook.
        return { ...ended, queuedRequest: storedRequest(job.data, body) };
      }
    }
    return (await readTask(ctx, id)).view;
  }

  /** Give back a slot of `client`'s share (a task of its that ended without `ended`). */
  async release(client: string | null): Promise<void> {
    if (client !== null) await this.ctx.connections.commands.hincrby(this.ctx.keys.clients, client, -1);
  }
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
