import {
  type Attributes,
  context,
  createContextKey,
  type Context as OtelContext,
  SpanStatusCode,
  type Tracer,
  trace,
} from '@opentelemetry/api';

/**
 * The context key of the tracer a call is traced by: a server given its own tracer (`tracing: tracer`) puts it
 * in its calls' contexts, so work done under them (a worker thread's call) is recorded by the same SDK.
 */
export const TRACER_KEY = createContextKey('tiffin.tracer');

/** The scope of spans made where no tracer is in the context (work under a span the user started). */
const FALLBACK_SCOPE = '@tiffin/core';

/**
 * A call handed to a worker thread, seen from the caller's side (docs/observability.md): made only when the
 * active context holds a recording span, so an untraced or unsampled call pays one context read.
 */
export interface ThreadCall {
  readonly parent: OtelContext;
  readonly tracer: Tracer;
  /** When it was handed over (`performance.now()`). */
  readonly start: number;
  /** When a thread took it (`performance.now()`), once one did. */
  sent?: number;
}

/** The active context's call, when a recording span is in it: what a thread's span becomes a child of. */
export function threadCall(): ThreadCall | undefined {
  const active = context.active();
  if (trace.getSpan(active)?.isRecording() !== true) return undefined;
  const tracer = (active.getValue(TRACER_KEY) as Tracer | undefined) ?? trace.getTracer(FALLBACK_SCOPE);
  return { parent: active, tracer, start: performance.now() };
}

/**
 * The span of one call a worker thread ran, made once its answer is back: from the hand-over until now, with
 * the milliseconds it waited for a free thread (`tiffin.thread.wait_ms`) and the thread's own measure of its
 * run (`tiffin.thread.run_ms`, the worker's clock). A failure is an error span unless it was the client's (4xx).
 */
export function endThreadCall(
  call: ThreadCall,
  name: string,
  attributes: Attributes,
  runMs: number | undefined,
  error?: Error,
): void {
  const end = performance.now();
  const span = call.tracer.startSpan(name, { startTime: call.start, attributes }, call.parent);
  span.setAttribute('tiffin.thread.wait_ms', (call.sent ?? end) - call.start);
  if (runMs !== undefined) span.setAttribute('tiffin.thread.run_ms', runMs);
  if (error) {
    const status = (error as { httpStatus?: unknown }).httpStatus;
    if (typeof status !== 'number' || status >= 500) {
      span.recordException(error);
      span.setStatus({ code: SpanStatusCode.ERROR, message: error.message });
    }
  }
  span.end(end);
}
