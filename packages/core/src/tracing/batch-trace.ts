import { context, type Link, ROOT_CONTEXT, type Span, SpanStatusCode, trace } from '@opentelemetry/api';
import type { CallTrace } from './call-trace.js';
import { TRACER_KEY } from './thread-span.js';

/**
 * One run of a batch as its callers' timelines see it (docs/observability.md): each caller's queue wait and run,
 * and, when any caller is recorded, a `batch` span of its own trace linked to every recorded caller's span, which
 * each caller's `run` span links back to.
 */
export class BatchTrace {
  private readonly span: Span | undefined;
  private readonly tracer: CallTrace['tracer'];
  private readonly started = performance.now();

  constructor(
    private readonly calls: ReadonlyArray<CallTrace | undefined>,
    enqueuedAt: readonly number[],
    rows: number,
  ) {
    const links: Link[] = [];
    let tracer: CallTrace['tracer'];
    for (let i = 0; i < calls.length; i++) {
      const call = calls[i];
      call?.add('queue', enqueuedAt[i] as number, this.started);
      if (call?.recording && call.span) {
        tracer = call.tracer;
        links.push({ context: call.span.spanContext() });
      }
    }
    this.tracer = tracer;
    this.span = tracer?.startSpan('batch', {
      root: true,
      links,
      startTime: this.started,
      attributes: { 'tiffin.batch.size': calls.length, 'tiffin.batch.rows': rows },
    });
  }

  /** Run the batched function with the batch span active (spans it makes are the batch's children). */
  run<T>(fn: () => T): T {
    return this.span
      ? context.with(trace.setSpan(ROOT_CONTEXT, this.span).setValue(TRACER_KEY, this.tracer), fn)
      : fn();
  }

  /** The batch ran (or failed with `error`): each caller's run is counted and linked to the batch span. */
  end(error?: unknown): void {
    const ended = performance.now();
    const links = this.span ? [{ context: this.span.spanContext() }] : undefined;
    for (const call of this.calls) call?.add('run', this.started, ended, links);
    if (!this.span) return;
    if (error !== undefined) {
      if (error instanceof Error) this.span.recordException(error);
      this.span.setStatus({ code: SpanStatusCode.ERROR });
    }
    this.span.end(ended);
  }
}
