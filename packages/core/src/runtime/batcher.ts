import { BatchContext, type Context } from '../context/context.js';
import { ServiceUnavailable } from '../errors/index.js';
import type { AnyBatching } from '../io/batching.js';
import type { BatchOptions } from '../service/service.js';
import { BatchTrace } from '../tracing/batch-trace.js';
import type { BatchMetrics } from './batch-metrics.js';
import { CostModel } from './cost-model.js';
import type { Invocation } from './invocation.js';

/** The batched API function, types erased (the service checked them at registration). */
export type BatchFunction = (batch: unknown, ctx: BatchContext) => unknown;

interface Pending {
  readonly value: unknown;
  readonly rows: number;
  readonly invocation: Invocation;
  readonly ctx: Context;
  readonly enqueuedAt: number;
  resolve(output: unknown): void;
  reject(error: unknown): void;
}

/** Weight an older inter-arrival gap keeps per new one. */
const ARRIVAL_DECAY = 0.8;

/**
 * The adaptive batcher of one batchable API: requests queue here; up to `maxConcurrentBatches` batches run
 * at a time (default one), each made of the oldest requests up to `max_batch_size` rows (a request of k rows
 * counts as k, and is never split; one of more than `max_batch_size` rows runs as a batch of its own).
 *
 * When the function is free (a batch slot is open) it runs what is queued as soon as waiting longer cannot help: the queue holds a
 * full batch, or the oldest request would miss `max_latency_ms` (its age plus the learnt cost of the batch),
 * or no further request is expected in time (twice the recent gap between arrivals). A new request that could
 * not start within `max_latency_ms` (the batch running plus the full batches ahead of it, by the learnt cost)
 * is refused with 503 and `Retry-After`. Callers that went away (disconnected, timed out) are dropped before a
 * batch is made.
 * A batch whose run fails is run again in halves until the failure is narrowed down to the caller at fault:
 * one caller's bad value fails that caller only.
 */
export class Batcher {
  private readonly queue: Pending[] = [];
  private queuedRows = 0;
  /** Batches running now, each with its start time and rows (several when `maxConcurrentBatches` > 1). */
  private readonly running = new Set<{ since: number; rows: number }>();
  private waiting = false;
  private arrivals = 0;
  private lastArrival = 0;
  private gapMs = Number.NaN;
  readonly cost = new CostModel();

  constructor(
    private readonly apiName: string,
    private readonly fn: BatchFunction,
    private readonly input: AnyBatching,
    private readonly output: AnyBatching,
    private readonly options: BatchOptions,
    private readonly metrics: BatchMetrics | undefined,
  ) {
    metrics?.track(apiName, () => this.queuedRows);
  }

  /** Rows waiting for a batch. */
  get depth(): number {
    return this.queuedRows;
  }

  /** Queue one request's input; resolves with its own part of the batch's output. */
  submit(value: unknown, invocation: Invocation, ctx: Context): Promise<unknown> {
    const { batch_dim: dim, max_latency_ms: budget } = this.options;
    const rows = this.input.rows(value, dim);
    const wait = this.expectedWait(rows);
    if (wait > budget) {
      this.metrics?.shedOne(this.apiName);
      throw new ServiceUnavailable(
        `API '${this.apiName}' is overloaded: the batch queue cannot start this request within ${budget} ms`,
        { code: 'BATCH_QUEUE_FULL', headers: { 'retry-after': String(Math.max(1, Math.ceil(wait / 1000))) } },
      );
    }
    const now = performance.now();
    if (this.lastArrival > 0) {
      const gap = now - this.lastArrival;
      this.gapMs = Number.isNaN(this.gapMs) ? gap : this.gapMs * ARRIVAL_DECAY + gap * (1 - ARRIVAL_DECAY);
    }
    this.lastArrival = now;
    this.arrivals++;
    return new Promise<unknown>((resolve, reject) => {
      this.queue.push({ value, rows, invocation, ctx, enqueuedAt: now, resolve, reject });
      this.queuedRows += rows;
      if (this.hasSlot() && !this.waiting) this.decide();
    });
  }

  private get slots(): number {
    return this.options.maxConcurrentBatches ?? 1;
  }

  private hasSlot(): boolean {
    return this.running.size < this.slots;
  }

  /**
   * Milliseconds before a request of `rows` rows would start, by the learnt cost (0 until it is learnt): the
   * soonest running batch to end when every slot is taken, plus the full batches ahead shared among the slots.
   */
  private expectedWait(rows: number): number {
    if (!this.cost.ready) return 0;
    const max = this.options.max_batch_size;
    const now = performance.now();
    let wait = 0;
    if (!this.hasSlot()) {
      wait = Number.POSITIVE_INFINITY;
      for (const r of this.running)
        wait = Math.min(wait, Math.max(0, r.since + this.cost.estimate(r.rows) - now));
    }
    // A request over the cap is one batch of its own: only the rows queued ahead of it count.
    const batchesAhead = Math.floor((this.queuedRows + Math.min(rows, max) - 1) / max);
    return wait + Math.ceil(batchesAhead / this.slots) * this.cost.estimate(max);
  }

  /** The function is free and requests are queued: run a batch now, or wait a little for more. */
  private decide(): void {
    this.dropGone();
    if (this.queue.length === 0) return;
    const { max_batch_size: max, max_latency_ms: budget } = this.options;
    if (this.queuedRows >= max) {
      this.dispatch();
      return;
    }
    const age = performance.now() - this.queue[0]!.enqueuedAt;
    const left = budget - age - this.cost.estimate(Math.min(max, this.queuedRows + 1));
    const expected = 2 * this.gapMs;
    if (!(left > 0) || !(expected < left)) {
      this.dispatch();
      return;
    }
    const seen = this.arrivals;
    const resume = () => {
      this.waiting = false;
      // Someone arrived while we waited: more may follow, decide again; else waiting no longer pays.
      if (this.arrivals !== seen) this.decide();
      else this.dispatch();
    };
    this.waiting = true;
    // Below a millisecond a timer cannot wait; one turn of the event loop lets arrived requests queue up.
    if (expected < 1) setImmediate(resume);
    else setTimeout(resume, expected);
  }

  /** Reject and forget queued requests whose caller went away. */
  private dropGone(): void {
    let kept = 0;
    for (const p of this.queue) {
      if (p.invocation.abort.isAborted) {
        this.queuedRows -= p.rows;
        p.reject(new ServiceUnavailable('The caller went away before its batch ran'));
      } else this.queue[kept++] = p;
    }
    this.queue.length = kept;
  }

  private dispatch(): void {
    this.dropGone();
    const max = this.options.max_batch_size;
    const batch: Pending[] = [];
    let rows = 0;
    while (this.queue.length > 0 && rows + this.queue[0]!.rows <= max) {
      const next = this.queue.shift()!;
      batch.push(next);
      rows += next.rows;
    }
    // A request larger than the cap is a batch of its own when its turn comes: the cap shapes batches, the
    // request limits bound what one caller sends.
    if (batch.length === 0 && this.queue.length > 0) {
      const alone = this.queue.shift()!;
      batch.push(alone);
      rows = alone.rows;
    }
    if (batch.length === 0) return;
    this.queuedRows -= rows;
    const slot = { since: performance.now(), rows };
    this.running.add(slot);
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      this.running.delete(slot);
      if (this.queue.length > 0 && !this.waiting) this.decide();
    };
    this.run(batch, rows, release).finally(release);
    // Another slot is open and requests are still queued: they need not wait for this batch to end.
    if (this.queue.length > 0 && this.hasSlot() && !this.waiting) this.decide();
  }

  private async run(batch: Pending[], rows: number, release: () => void = () => {}): Promise<void> {
    const dim = this.options.batch_dim;
    let merged: unknown;
    try {
      merged = this.input.merge(
        batch.map((p) => p.value),
        dim,
      );
    } catch (err) {
      if (batch.length === 1) {
        batch[0]!.reject(err);
        return;
      }
      // Inputs that do not stack (e.g. other trailing shapes): one caller's odd input must not fail the rest.
      for (const p of batch) await this.run([p], p.rows);
      return;
    }
    this.metrics?.batchRun(this.apiName, rows);
    const first = batch[0]!;
    const ctx = new BatchContext(first.ctx.request, first.ctx.state, first.invocation.requestId, rows);
    const started = performance.now();
    // Only when a caller has a timeline (Server-Timing, tracing).
    const timed = batch.some((p) => p.invocation.trace !== undefined)
      ? new BatchTrace(
          batch.map((p) => p.invocation.trace),
          batch.map((p) => p.enqueuedAt),
          rows,
        )
      : undefined;
    try {
      const output = await (timed ? timed.run(() => this.fn(merged, ctx)) : this.fn(merged, ctx));
      timed?.end();
      this.cost.observe(rows, performance.now() - started);
      // A function on other threads (the option is set) takes the next batch while these answers are written;
      // one on this thread would run it before them, so its slot opens only once they are out.
      if (this.options.maxConcurrentBatches !== undefined) release();
      const parts = this.splitOutput(output, batch, rows);
      let start = 0;
      for (let i = 0; i < batch.length; i++) {
        const p = batch[i]!;
        const failure = ctx.failureIn(start, p.rows);
        start += p.rows;
        if (failure) p.reject(failure);
        else {
          copyResponseSettings(ctx, p.ctx);
          p.resolve(parts[i]);
        }
      }
    } catch (err) {
      timed?.end(err);
      this.cost.observe(rows, performance.now() - started);
      if (batch.length === 1 || err instanceof ServiceUnavailable) for (const p of batch) p.reject(err);
      else await this.runHalves(batch);
    } finally {
      if (ctx.usedTempDir) ctx.dispose().catch(() => {});
    }
  }

  /**
   * A merged run failed: one caller's value (an out-of-range token id, a NaN a kernel refuses) fails it for
   * everyone. Run each half of the callers apart, so the run narrows down to the request at fault, which fails
   * alone, while the others are answered: about 2·log2(callers) extra runs for one bad request. A caller that
   * went away meanwhile is dropped; a service with no runner (503) is not retried.
   */
  private async runHalves(batch: readonly Pending[]): Promise<void> {
    const half = Math.ceil(batch.length / 2);
    for (const part of [batch.slice(0, half), batch.slice(half)]) {
      const alive = part.filter((p) => {
        if (!p.invocation.abort.isAborted) return true;
        p.reject(new ServiceUnavailable('The caller went away before its batch ran'));
        return false;
      });
      if (alive.length > 0)
        await this.run(
          alive,
          alive.reduce((sum, p) => sum + p.rows, 0),
        );
    }
  }

  /** One output per caller; a batch the output descriptor cannot split is the function's fault (a 500). */
  private splitOutput(output: unknown, batch: readonly Pending[], rows: number): unknown[] {
    const dim = this.options.batch_dim;
    let got: number;
    let parts: unknown[];
    try {
      got = this.output.batchRows(output, dim);
      parts =
        got === rows
          ? this.output.split(
              output,
              batch.map((p) => p.rows),
              dim,
            )
          : [];
    } catch (err) {
      throw new Error(
        `API '${this.apiName}' returned a batch its output descriptor cannot split: ${(err as Error).message}`,
      );
    }
    if (got !== rows) {
      throw new Error(
        `API '${this.apiName}' returned ${got} rows along dimension ${dim} for a batch of ${rows}; a batchable API returns one row per input row`,
      );
    }
    return parts;
  }
}

/** What the batch function set on its context applies to every caller in the batch. */
function copyResponseSettings(from: Context, to: Context): void {
  to.response.status = from.response.status;
  for (const [name, value] of from.response.headerList()) to.response.headers.append(name, value);
  to.response.cookies.push(...from.response.cookies);
}
