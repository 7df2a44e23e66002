import type { ErrorBody } from '@tiffin/core';
import { type TaskResult, TaskResultTooLarge } from '@tiffin/core/tasks';
import { INLINE_ANSWER_BYTES } from './held-bytes.js';
import { type EncodedAnswer, type Ending, endingError } from './job-records.js';
import type { StoreContext } from './store-context.js';
import type { TaskClaims } from './task-claims.js';
import type { TaskEndings } from './task-endings.js';
import type { TaskLeases } from './task-leases.js';

/**
 * A running task's end, written through its lease: an answer kept (`keep-5.lua`, before BullMQ's completion, so a
 * reader that sees the task succeeded finds it) and the job completed, or the job failed with its ending; then
 * the bookkeeping (`TaskEndings.ended`), which a completion sends behind BullMQ's own without waiting for it. A small answer no larger than its task's body (`INLINE_ANSWER_BYTES`) is
 * written in the job's return value instead, in BullMQ's completion: it takes the body's place in the count
 * (`ended-10.lua`), which it cannot outgrow, so it needs no check and no script of its own. A task this process no
 * longer holds is left alone.
 */
export class TaskSettlement {
  constructor(
    private readonly ctx: StoreContext,
    private readonly leases: TaskLeases,
    private readonly endings: TaskEndings,
    /** The next claim, which a completion may bring the next job for. */
    private readonly claims: TaskClaims,
  ) {}

  async complete(id: string, result: TaskResult): Promise<void> {
    const { ctx } = this;
    const lease = this.leases.get(id);
    if (!lease) return;
    const { maxResultBytes } = ctx.settings;
    const size = result.body.byteLength;
    if (size > maxResultBytes) {
      const tooLarge = new TaskResultTooLarge(
        `The task's answer is ${size} bytes; this server keeps at most ${maxResultBytes}`,
      );
      return this.fail(id, tooLarge.toBody());
    }
    const body = Buffer.from(result.body.buffer, result.body.byteOffset, result.body.byteLength);
    // A small answer in the job itself, in base64 (as a job ended before answers were kept apart keeps it);
    // a larger one kept apart, raw (`HeldBytes`): BullMQ copies a return value into its events stream.
    const inline = size <= Math.min(INLINE_ANSWER_BYTES, lease.bodyBytes);
    const encoded: EncodedAnswer = inline
      ? { status: result.status, headers: result.headers, body: body.toString('base64') }
      : { status: result.status, headers: result.headers, kept: true };
    // Built only when it is the end: an error's stack costs more than the rest of a completion's own work.
    const full = (): Ending => ({
      status: 'failed',
      error: new TaskResultTooLarge(
        `The task's answer (${size} bytes) does not fit in the ${ctx.held.max} bytes the other tasks leave`,
      ).toBody(),
    });
    /** Whether the answer fits beside the bytes the other tasks hold (asked once, before the job completes). */
    let fits: boolean | undefined = inline || undefined;
    const started = lease.job.processedOn ?? Date.now();
    const succeeded = () => ({
      status: 'succeeded' as const,
      seconds: (Date.now() - started) / 1000,
      inlineBytes: inline ? size : undefined,
    });
    // The next queued job comes back with this one's end when this process's runner claims next.
    const next = this.claims.askNext();
    /** The bookkeeping sent behind the completion (`ended-10.lua`), without a round trip of its own. */
    let behind: Promise<0 | 1 | 2> | undefined;
    const write = async () => {
      fits ??= await ctx.held.keep(id, body);
      if (!fits) return lease.job.moveToFailed(endingError(full()), lease.token, false);
      const completing = lease.job.moveToCompleted(encoded, lease.token, next !== null);
      // BullMQ sends its completion within this turn of the event loop; the bookkeeping follows it on the same
      // connection in the turn's check phase, so both leave in one write (`coalesceWrites`) and Redis runs them
      // in that order. Should it arrive first all the same, it does nothing and is sent again below.
      behind = new Promise<void>((sent) => setImmediate(sent)).then(() =>
        this.endings.ended(lease.job, succeeded(), ctx.workerScripts),
      );
      behind.catch(() => {});
      const reply = await completing;
      next?.(reply, lease.token);
    };
    if (await this.leases.settle(id, write)) {
      // Done behind the completion (0), or by an earlier try whose reply was lost (2).
      if (fits && behind && (await behind.catch(() => 1)) !== 1) return;
      await this.endings.ended(lease.job, fits ? succeeded() : full()).catch(() => {});
    }
  }

  async fail(id: string, error: ErrorBody, status: 'failed' | 'cancelled' = 'failed'): Promise<void> {
    const lease = this.leases.get(id);
    if (!lease) return;
    const ending: Ending = { status, error };
    const written = await this.leases.settle(id, () =>
      lease.job.moveToFailed(endingError(ending), lease.token, false),
    );
    // Once only: a retried write must not give the client's slot back twice.
    if (written) await this.endings.ended(lease.job, ending).catch(() => {});
  }
}
