import type { Tracer } from '@opentelemetry/api';
import type { CallTrace } from '../../tracing/call-trace.js';
import { endHttpSpan, headersGetter, serverCall } from '../../tracing/tracing.js';
import type { Exchange } from '../exchange.js';

/**
 * The server span of one HTTP request, with the stable HTTP semantic conventions (docs/observability.md): named
 * `METHOD /route` once the route is known, the trace context continued from the request's headers.
 */
export function httpServerCall(tracer: Tracer, ctx: Exchange, route: string | undefined): CallTrace {
  const host = ctx.get('host');
  const colon = host.lastIndexOf(':');
  const port = colon > host.lastIndexOf(']') ? Number(host.slice(colon + 1)) : Number.NaN;
  return serverCall(tracer, route ? `${ctx.method} ${route}` : ctx.method, ctx.req.headers, headersGetter, {
    'http.request.method': ctx.method,
    'url.path': ctx.path,
    'url.scheme': 'http',
    'server.address': colon > host.lastIndexOf(']') ? host.slice(0, colon) : host,
    ...(Number.isInteger(port) ? { 'server.port': port } : {}),
    ...(route ? { 'http.route': route } : {}),
    'network.protocol.version': ctx.req.httpVersion,
    'user_agent.original': ctx.get('user-agent') || undefined,
  });
}

/** The request's answer is out (or its client gone): its span ends with the status and the route as routed. */
export function endHttpCall(ctx: Exchange): void {
  const span = ctx.trace?.span;
  // A plain mounted middleware has no route pattern (its metrics label is `mounted`): the span keeps no route.
  const route = ctx.endpoint === 'unmatched' || ctx.endpoint === 'mounted' ? undefined : ctx.endpoint;
  if (span) endHttpSpan(span, ctx.method, ctx.status, route);
}
