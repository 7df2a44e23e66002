import { encodeErrorBody, errorAnswer } from '../../errors/error-answer.js';
import { Cancelled, isTiffinError } from '../../errors/index.js';
import type { Logger } from '../../logging/logger.js';
import type { Exchange } from '../exchange.js';
import type { ServerMetrics } from '../metrics.js';
import { ClientDisconnected } from './client-disconnected.js';

/**
 * Answer a thrown error with the one error body (docs/spec/io-descriptors.md D4): TiffinError → its status,
 * anything else → 500. Shed and timed-out answers are counted here, the one place every error answer passes.
 * A request inside a route group is answered in the group's shape (its `errorMapper`), counted by the catalog's.
 */
export function writeError(ctx: Exchange, thrown: unknown, logger: Logger, metrics?: ServerMetrics): void {
  // The request's own abort reason thrown back (its client left while it waited in a queue) is no fault of the
  // server: a cancelled request, 409 `CANCELLED`, as a generation whose client left is, never a logged 500. Only
  // that reason: a route's own error aborts the request too (its other work stops), and is answered as it is.
  const err =
    thrown instanceof ClientDisconnected
      ? new Cancelled('The request was cancelled: its client left')
      : thrown;
  const trace = ctx.trace;
  // The error logs name the request's trace; a server fault is recorded on its span (docs/observability.md).
  const answer = errorAnswer(err, ctx.requestId, logger, trace?.traceId);
  if (answer.status >= 500 && trace?.recording && err instanceof Error) trace.span?.recordException(err);
  metrics?.errorAnswered(ctx.api?.name ?? ctx.endpoint, answer.status, answer.body.code);
  let status = answer.status;
  let body: Buffer | undefined;
  if (ctx.errorMapper) {
    try {
      const mapped = ctx.errorMapper(answer);
      if (!Number.isInteger(mapped.status) || mapped.status < 400 || mapped.status > 599)
        throw new Error(`status ${String(mapped.status)} is no error status`);
      body = Buffer.from(JSON.stringify(mapped.body), 'utf8');
      status = mapped.status;
    } catch (mapperErr) {
      // A mapper that fails leaves the catalog's own answer, never a 5xx of its own.
      logger.log('error', 'error mapper failed', {
        requestId: ctx.requestId,
        error: mapperErr instanceof Error ? mapperErr.message : String(mapperErr),
      });
    }
  }
  ctx.status = status;
  // e.g. Retry-After on a 503 from a full queue, WWW-Authenticate on a 401.
  if (isTiffinError(err)) for (const [name, value] of Object.entries(err.headers)) ctx.set(name, value);
  ctx.set('content-type', 'application/json');
  // The rest of an oversized body is not read: close the connection rather than have Node drain it.
  if (answer.status === 413) ctx.set('connection', 'close');
  ctx.responseBody = body ?? encodeErrorBody(answer.body);
}
