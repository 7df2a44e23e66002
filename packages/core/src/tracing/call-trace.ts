import {
  context,
  type Link,
  type Context as OtelContext,
  type Span,
  SpanStatusCode,
  TraceFlags,
  type Tracer,
  trace,
} from '@opentelemetry/api';

/** The steps of an API call that `Server-Timing` names, each a child span of the call's server span when traced. */
export type CallStep = 'decode' | 'queue' | 'run' | 'encode';

/** Whether `value` is a promise (or any thenable). */
function thenable(value: unknown): value is PromiseLike<unknown> {
  return value !== null && typeof (value as PromiseLike<unknown> | undefined)?.then === 'function';
}

/**
 * One API call's timeline (docs/observability.md): the milliseconds of its steps for the `Server-Timing` header
 * and, when tracing is on, the server span of its request and a child span per step. Made by the transport only
 * when the server answers `Server-Timing` or traces: with both off a call has none and pays nothing.
 */
export class CallTrace {
  // Milliseconds of each step, -1 while it has not run: plain fields, read on every timed call.
  private queueMs = -1;
  private decodeMs = -1;
  private runMs = -1;
  private encodeMs = -1;
  /** Whether the call's spans are recorded (tracing on and the request sampled): children are then made. */
  readonly recording: boolean;

  constructor(
    readonly tracer: Tracer | undefined,
    /** The request's server span (absent when only timing). */
    readonly span: Span | undefined,
    /** The context the call's children start in: the server span's. */
    readonly context: OtelContext | undefined,
  ) {
    this.recording = span?.isRecording() === true;
  }

  /** The request's trace id, when traced (the access log and error logs carry it). */
  get traceId(): string | undefined {
    return this.span?.spanContext().traceId;
  }

  /** The trace id when the request is sampled (its spans are exported): what a metrics exemplar may name. */
  get sampledTraceId(): string | undefined {
    const span = this.span?.spanContext();
    return span && (span.traceFlags & TraceFlags.SAMPLED) !== 0 ? span.traceId : undefined;
  }

  /**
   * A step ran from `start` (a `performance.now()` time) until now: its time is counted, and a recorded call gets
   * its child span, made after the fact with those times. Answers now, the next step's start.
   */
  step(step: CallStep, start: number, links?: Link[]): number {
    const end = performance.now();
    this.add(step, start, end, links);
    return end;
  }

  /** `step` with both ends given (the batcher times the queue and the batch for each of its callers). */
  add(step: CallStep, start: number, end: number, links?: Link[]): void {
    const ms = end - start;
    if (step === 'decode') this.decodeMs = Math.max(this.decodeMs, 0) + ms;
    else if (step === 'run') this.runMs = Math.max(this.runMs, 0) + ms;
    else if (step === 'encode') this.encodeMs = Math.max(this.encodeMs, 0) + ms;
    else this.queueMs = Math.max(this.queueMs, 0) + ms;
    if (this.recording) this.tracer?.startSpan(step, { startTime: start, links }, this.context).end(end);
  }

  /**
   * Call the API function: in a recorded call inside its `run` span (made now, so spans the function makes with
   * the OTel API's active context are its children); the answer as `fn` gave it.
   */
  run<T>(fn: () => T): T {
    if (!this.recording || this.tracer === undefined) return fn();
    const span = this.tracer.startSpan('run', undefined, this.context);
    let out: T;
    try {
      out = context.with(trace.setSpan(this.context as OtelContext, span), fn);
    } catch (err) {
      failed(span, err);
      throw err;
    }
    if (thenable(out))
      out.then(
        () => span.end(),
        (err: unknown) => failed(span, err),
      );
    else span.end();
    return out;
  }

  /** The `Server-Timing` header's value (W3C Server Timing): each step that ran, in milliseconds. */
  serverTiming(): string {
    let value = this.queueMs < 0 ? '' : `queue;dur=${micro(this.queueMs)}, `;
    if (this.decodeMs >= 0) value += `decode;dur=${micro(this.decodeMs)}, `;
    if (this.runMs >= 0) value += `run;dur=${micro(this.runMs)}, `;
    if (this.encodeMs >= 0) value += `encode;dur=${micro(this.encodeMs)}, `;
    return value.slice(0, -2);
  }
}

/**
 * Milliseconds to the microsecond, written from integers: the digits beyond are noise, and writing a float as
 * text costs ten times more than writing two integers (on the path of every API answer).
 */
function micro(ms: number): string {
  const us = Math.round(ms * 1000);
  const frac = us % 1000;
  return `${(us - frac) / 1000}.${frac < 10 ? '00' : frac < 100 ? '0' : ''}${frac}`;
}

function failed(span: Span, err: unknown): void {
  if (err instanceof Error) span.recordException(err);
  span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
  span.end();
}
