import { propagation, SpanKind, SpanStatusCode, type TextMapGetter, type Tracer } from '@opentelemetry/api';
import type { CallTrace } from './call-trace.js';
import { serverCall } from './tracing.js';

type Headers = ReadonlyArray<readonly [string, string]>;

/** A stored request's header list as a carrier of the trace context (names lower-case, as stored). */
const listGetter: TextMapGetter<Headers> = {
  keys: (carrier) => carrier.map(([name]) => name),
  get: (carrier, key) => carrier.find(([name]) => name === key)?.[1],
};

/**
 * A task's headers as its store keeps them, with the trace context of its submit (its server span) in place of
 * the one the caller sent: the run, in whichever process claims it and from any store, continues the submit's
 * trace (docs/observability.md). Untraced, the headers as they are.
 */
export function withSubmitContext(
  headers: Array<[string, string]>,
  submit: CallTrace | undefined,
): Array<[string, string]> {
  if (!submit?.span || !submit.context) return headers;
  const carrier: Record<string, string> = {};
  propagation.inject(submit.context, carrier);
  const kept = headers.filter(
    ([name]) => !(name in carrier) && name !== 'traceparent' && name !== 'tracestate',
  );
  for (const [name, value] of Object.entries(carrier)) kept.push([name, value]);
  return kept;
}

/** The span of one run of a task, a child of its submit's span (the context its stored headers carry). */
export function taskRunCall(
  tracer: Tracer,
  headers: Headers,
  api: string,
  id: string,
  attempt: number,
): CallTrace {
  return serverCall(
    tracer,
    `task ${api}`,
    headers,
    listGetter,
    { 'tiffin.api': api, 'tiffin.task.id': id, 'tiffin.task.attempt': attempt },
    SpanKind.CONSUMER,
  );
}

/** A task's run ended: its outcome on the span, an error status when it failed. */
export function endTaskRun(trace: CallTrace | undefined, outcome: string): void {
  const span = trace?.span;
  if (!span) return;
  span.setAttribute('tiffin.task.outcome', outcome);
  if (outcome === 'failed') span.setStatus({ code: SpanStatusCode.ERROR });
  span.end();
}
