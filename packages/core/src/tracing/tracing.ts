import {
  type Attributes,
  context,
  defaultTextMapGetter,
  ProxyTracerProvider,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type TextMapGetter,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import { CallTrace } from './call-trace.js';
import { TRACER_KEY } from './thread-span.js';

/** The instrumentation scope of Tiffin's spans. */
export const TRACER_NAME = '@tiffin/core';

/**
 * Whether an OpenTelemetry SDK is registered (`trace.setGlobalTracerProvider`, as `@tiffin/otel` and any SDK's
 * `register()` do): without one the API is a no-op, and a server made then does not trace at all.
 */
export function globalTracingRegistered(): boolean {
  const provider = trace.getTracerProvider();
  return !(provider instanceof ProxyTracerProvider) || provider.getDelegateTracer(TRACER_NAME) !== undefined;
}

/**
 * The tracer a server uses (docs/observability.md): `true` or absent, the global one when an SDK is registered;
 * a `Tracer`, that one; `false`, none.
 */
export function resolveTracer(option: boolean | Tracer | undefined): Tracer | undefined {
  if (option === false) return undefined;
  if (option !== undefined && option !== true) return option;
  return option === true || globalTracingRegistered() ? trace.getTracer(TRACER_NAME) : undefined;
}

/** gRPC metadata as a carrier of `traceparent`, `tracestate` and `baggage`: its first value of a key. */
export const metadataGetter: TextMapGetter<{
  get(key: string): unknown[];
  getMap(): Record<string, unknown>;
}> = {
  keys: (carrier) => Object.keys(carrier.getMap()),
  get: (carrier, key) => {
    const value = carrier.get(key)[0];
    return typeof value === 'string' ? value : undefined;
  },
};

/**
 * Start the server span of one call, continuing the W3C trace context (`traceparent`, `tracestate`) and baggage
 * its caller sent (through the globally registered propagator), with `attributes` (the HTTP or RPC semantic
 * conventions, docs/observability.md); the call's timeline with it.
 */
export function serverCall<Carrier>(
  tracer: Tracer,
  name: string,
  carrier: Carrier,
  getter: TextMapGetter<Carrier>,
  attributes: Attributes,
  kind: SpanKind = SpanKind.SERVER,
): CallTrace {
  const parent = propagation.extract(ROOT_CONTEXT, carrier, getter);
  const span = tracer.startSpan(name, { kind, attributes }, parent);
  return new CallTrace(tracer, span, trace.setSpan(parent, span).setValue(TRACER_KEY, tracer));
}

/** The headers of a Node request as a carrier (lower-case names, as Node gives them). */
export const headersGetter = defaultTextMapGetter;

/** End an HTTP server span with its status: an error only for a 5xx (a client's 4xx is the server's success). */
export function endHttpSpan(span: Span, method: string, status: number, route: string | undefined): void {
  span.setAttribute('http.response.status_code', status);
  if (route !== undefined) {
    span.setAttribute('http.route', route);
    span.updateName(`${method} ${route}`);
  }
  if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
  span.end();
}

/** The server span of one gRPC call, with the RPC semantic conventions, continuing its metadata's trace context. */
export function grpcServerCall(
  tracer: Tracer,
  call: { getPath(): string; metadata: { get(key: string): unknown[]; getMap(): Record<string, unknown> } },
): CallTrace {
  const path = call.getPath();
  const slash = path.lastIndexOf('/');
  return serverCall(tracer, path.slice(1), call.metadata, metadataGetter, {
    'rpc.system': 'grpc',
    'rpc.service': path.slice(1, slash),
    'rpc.method': path.slice(slash + 1),
  });
}

/** End a gRPC server span with its status code (an error for the codes that are the server's, as in the RPC conventions). */
export function endRpcSpan(span: Span, code: number): void {
  span.setAttribute('rpc.grpc.status_code', code);
  if (SERVER_FAULTS.has(code)) span.setStatus({ code: SpanStatusCode.ERROR });
  span.end();
}

/** gRPC codes that mark a server's fault: UNKNOWN, DEADLINE_EXCEEDED, UNIMPLEMENTED, INTERNAL, UNAVAILABLE, DATA_LOSS. */
const SERVER_FAULTS: ReadonlySet<number> = new Set([2, 4, 12, 13, 14, 15]);

/** Run `fn` with `trace`'s span as the active context (mounted routes and user code see it), or as it is. */
export function withCall<A extends unknown[], R>(
  trace: CallTrace | undefined,
  fn: (...args: A) => R,
  ...args: A
): R {
  return trace?.context ? context.with(trace.context, fn, undefined, ...args) : fn(...args);
}
