/** Run times of an API kept for its estimate: the most recent ones, so the estimate follows a changed load. */
export const RECENT_RUNS = 16;

/**
 * Seconds until a queued task is expected to finish: its place in the queue (from 1) times the mean of its
 * API's recent run times; null before any run finished. Rough: the tasks ahead are taken to cost as much, and
 * running tasks' remaining time and the runners' concurrency are not counted.
 */
export function queuedEta(position: number, runSeconds: readonly number[]): number | null {
  if (runSeconds.length === 0) return null;
  const mean = runSeconds.reduce((a, b) => a + b, 0) / runSeconds.length;
  return round(position * mean);
}

/** Seconds until a running task is expected to finish, from its mean step time so far; null before a step. */
export function runningEta(step: number, totalSteps: number | null, elapsedSeconds: number): number | null {
  if (step <= 0 || totalSteps === null || totalSteps < step) return null;
  return round(((totalSteps - step) * elapsedSeconds) / step);
}

/** The `queued` event that tells a subscriber where its task stands in the queue. */
export function queuedEvent(
  id: string,
  position: number | undefined,
  eta: number | null | undefined,
): { event: 'queued'; data: Record<string, unknown> } {
  const data: Record<string, unknown> = { request_id: id, status: 'queued' };
  if (position !== undefined) Object.assign(data, { queue_position: position, eta_seconds: eta ?? null });
  return { event: 'queued', data };
}

function round(seconds: number): number {
  return Math.round(seconds * 10) / 10;
}
