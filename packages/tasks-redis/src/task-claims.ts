import { randomUUID } from 'node:crypto';
import { type ClaimedTask, TaskInterrupted } from '@tiffin/core/tasks';
import { Job } from 'bullmq';
import { claimableJobKeys, nextJobOf } from './bullmq-assumptions.js';
import { cancelledBody, type JobData, storedRequest } from './job-records.js';
import type { QueuedHint } from './queued-hint.js';
import type { StoreChannel } from './store-channel.js';
import type { StoreContext } from './store-context.js';
import type { TaskEndings } from './task-endings.js';
import type { TaskLeases } from './task-leases.js';

/**
 * A claim: a BullMQ job taken by hand (`Worker.getNextJob`), or one BullMQ handed over with the end of the one
 * before, started in one round trip (`start-4.lua`: its body and cancel mark read, its `started` event sent, the
 * jobs left counted) and held under a lease. A job started more times than its task's attempts allow (its process stopped
 * each time) is ended `TASK_INTERRUPTED` instead, and one cancelled meanwhile ends cancelled: both are handed
 * over as ended, so the runner tells their webhooks.
 */
export class TaskClaims {
  /** Tasks this store ended `TASK_INTERRUPTED` (out of attempts) on a claim, by API (`stats`). */
  readonly interrupted: Record<string, number> = {};

  constructor(
    private readonly ctx: StoreContext,
    private readonly leases: TaskLeases,
    private readonly hint: QueuedHint,
    private readonly endings: TaskEndings,
    private readonly channel: StoreChannel,
  ) {}

  async claim(): Promise<ClaimedTask | null> {
    const { ctx, hint } = this;
    if (ctx.connections.closed) return null;
    let taken = this.leases.handedOver.shift();
    if (!taken) {
      if (!hint.shouldAsk()) return null;
      const token = randomUUID();
      hint.asking();
      let next: Job<JobData> | undefined;
      try {
        next = (await ctx.worker.getNextJob(token, { block: false })) as Job<JobData> | undefined;
      } catch (err) {
        hint.mayBeQueued();
        throw err;
      }
      if (!next?.id) return null;
      hint.mayBeQueued();
      taken = { job: next, token };
    }
    const { job, token } = taken;
    const id = job.id as string;
    const data = job.data;
    const task: ClaimedTask = {
      id,
      api: data.api,
      attempt: job.attemptsStarted,
      request: storedRequest(data, null),
    };
    // A task this claim ends instead of starting is handed over as ended: the runner tells its webhook.
    const ended = (): ClaimedTask => ({ ...task, ended: true });
    if (job.attemptsStarted > data.attempts) {
      task.request = storedRequest(data, await ctx.held.body(id));
      if (await ctx.connections.commands.sismember(ctx.keys.cancelled, id)) {
        await this.endings.end(job, token, { status: 'cancelled', error: cancelledBody(id) });
        return ended();
      }
      const error = new TaskInterrupted(
        `task ${id} was running when its server stopped, ${data.attempts} time(s) of the ${data.attempts} it may start`,
      ).toBody();
      await this.endings.end(job, token, { status: 'failed', error });
      this.interrupted[data.api] = (this.interrupted[data.api] ?? 0) + 1;
      return ended();
    }
    const started = this.channel.encode({
      id,
      kind: 'event',
      event: { event: 'started', data: { request_id: id, status: 'started' } },
    });
    // The body read, the cancel mark read, the `started` event sent and the jobs left counted in one script.
    const mark = hint.mark();
    const [left, kept] = await ctx.scripts.tiffinStartBuffer(
      ctx.keys.cancelled,
      ...claimableJobKeys(ctx.queue),
      ctx.held.bodyKey(id),
      id,
      ctx.keys.channel,
      started,
    );
    task.request = storedRequest(data, kept);
    // None left, and no submit or message since the count: the next claim need not ask.
    if (left === 0) hint.noneLeft(mark);
    if (left === -1) {
      await this.endings.end(job, token, { status: 'cancelled', error: cancelledBody(id) });
      return ended();
    }
    this.leases.hold(id, job, token, kept?.byteLength ?? 0);
    return task;
  }

  /**
   * Whether a task's completion here asks BullMQ for the next job in the same reply (`moveToCompleted`'s
   * `fetchNext`): when this process's runner claims as soon as the completion returns, and a job may be queued.
   * If so, the answer is what takes that reply: the job it handed over (taken by the next claim, under the
   * completed one's token), or none left.
   */
  askNext(): ((reply: unknown, token: string) => void) | null {
    if (this.channel.queuedListeners.size === 0 || !this.hint.maybe) return null;
    const mark = this.hint.mark();
    return (reply, token) => {
      const next = nextJobOf(reply);
      if (next)
        this.leases.handedOver.push({ job: Job.fromJSON(this.ctx.worker, next.fields, next.id), token });
      else this.hint.noneLeft(mark);
    };
  }
}
