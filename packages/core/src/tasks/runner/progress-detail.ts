import type { TaskProgress } from '../task-store.js';

/** Most bytes of one progress event's detail (JSON); a larger detail is dropped, the step kept. */
export const MAX_DETAIL_BYTES = 256 * 1024;

/**
 * A step as the runner hands it to the store: its detail dropped when its JSON is over `MAX_DETAIL_BYTES` (or
 * is no JSON at all), so that no store keeps or sends a large one and none has to check.
 */
export function boundedProgress(progress: TaskProgress): TaskProgress {
  const { detail } = progress;
  if (detail === undefined) return progress;
  let size: number;
  try {
    size = JSON.stringify(detail)?.length ?? 0;
  } catch {
    size = Number.POSITIVE_INFINITY;
  }
  return size <= MAX_DETAIL_BYTES ? progress : { step: progress.step, totalSteps: progress.totalSteps };
}
