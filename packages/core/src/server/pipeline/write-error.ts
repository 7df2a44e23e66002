import { encodeErrorBody, errorAnswer } from '../../errors/error-answer.js';
import { isTiffinError } from '../../errors/index.js';
import type { Logger } from '../../logging/logger.js';
import type { Exchange } from '../exchange.js';
import type { ServerMetrics } from '../metrics.js';

/**
 * Answer a thrown error with the one error body (docs/spec/io-descriptors.md D4): TiffinError → its status,
 * anything else → 500. Shed and timed-out answers are counted here, the one place every error answer passes.
 */
export function writeError(ctx: Exchange, err: unknown, logger: Logger, metrics?: ServerMetrics): void {
  const answer = errorAnswer(err, ctx.requestId, logger);
  ctx.status = answer.status;
  metrics?.errorAnswered(ctx.api?.name ?? ctx.endpoint, answer.status, answer.body.code);
  // e.g. Retry-After on a 503 from a full queue.
  if (isTiffinError(err)) for (const [name, value] of Object.entries(err.headers)) ctx.set(name, value);
  ctx.set('content-type', 'application/json');
  // The rest of an oversized body is not read: close the connection rather than have Node drain it.
  if (answer.status === 413) ctx.set('connection', 'close');
  ctx.responseBody = encodeErrorBody(answer.body);
}
