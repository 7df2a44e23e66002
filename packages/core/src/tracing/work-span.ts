import { type Attributes, type Span, SpanStatusCode } from '@opentelemetry/api';
import { threadCall } from './thread-span.js';

/**
 * Work of a traced call that runs later or elsewhere (a queued generation, its run on a model thread): its spans
 * are children of the span active when `tracedWork()` was called, whichever context they are made in.
 */
export interface TracedWork {
  /** Start a child span now, or at `startTime` (a `performance.now()` reading). */
  start(name: string, attributes?: Attributes, startTime?: number): Span;
}

/**
 * The active call's work, when a recording span is active (docs/observability.md); undefined otherwise, so
 * untraced and unsampled work makes no span.
 */
export function tracedWork(): TracedWork | undefined {
  const call = threadCall();
  if (!call) return undefined;
  return {
    start: (name, attributes, startTime) =>
      call.tracer.startSpan(name, { attributes, startTime: startTime ?? performance.now() }, call.parent),
  };
}

/** End a work span, as an error span when `error` is the server's (not a client's 4xx, nor a cancellation). */
export function endWorkSpan(span: Span, error?: unknown): void {
  if (error !== undefined) {
    const status = (error as { httpStatus?: unknown }).httpStatus;
    if (typeof status !== 'number' || status >= 500) {
      if (error instanceof Error) span.recordException(error);
      span.setStatus({
        code: SpanStatusCode.ERROR,
        message: error instanceof Error ? error.message : String(error),
      });
    } else span.setAttribute('tiffin.error.status', status);
  }
  span.end();
}
