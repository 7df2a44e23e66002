import { isTiffinError, type Logger } from '@tiffin/core';
import type { GenerationEvents } from './generation-events.js';

/** Why a generation stopped early, as `generations_cancelled_total` counts it. */
export type CancelReason = 'timeout' | 'cancelled' | 'client_gone';

/**
 * The service log's lines of every generation (each step, its end) and the count of those cancelled by reason, so
 * an operator tells a too-short `--timeout` from clients leaving. Returns the unsubscribe.
 */
export function logGenerations(
  events: GenerationEvents,
  logger: Logger,
  countCancelled: (labels: [CancelReason]) => void,
): () => void {
  return events.subscribe((event) => {
    const requestId = event.id;
    switch (event.type) {
      case 'step':
        logger.log('info', 'generation step', { requestId, step: event.step, totalSteps: event.totalSteps });
        return;
      case 'done':
        logger.log('info', 'generation done', { requestId, seconds: event.seconds, seeds: event.seeds });
        return;
      case 'cancelled':
        countCancelled([cancelReason(event.reason)]);
        logger.log('info', 'generation cancelled', {
          requestId,
          reason: String(event.reason ?? event.message),
        });
        return;
      case 'failed':
        // A client's mistake is its answer's business; the log keeps what went wrong here.
        if (!isTiffinError(event.error) || event.error.httpStatus >= 500)
          logger.log('error', 'generation failed', { requestId, error: event.message });
        return;
    }
  });
}

/**
 * Why a generation's signal was aborted: its deadline passed (504), its task was cancelled, or else its client
 * went away (the server aborts with a plain error when the connection closes).
 */
export function cancelReason(reason: unknown): CancelReason {
  if (isTiffinError(reason) && reason.code === 'DEADLINE_EXCEEDED') return 'timeout';
  if (isTiffinError(reason) && reason.code === 'CANCELLED') return 'cancelled';
  return 'client_gone';
}
