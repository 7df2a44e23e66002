/** Bytes counted for a task beyond its request and answer (its view, its entry), so that empty ones count too. */
export const TASK_OVERHEAD_BYTES = 1024;

/** Unfinished tasks one client may hold when `maxClientTasks` is not set: a quarter of the limit. */
export function clientShare(maxTasks: number, maxClientTasks?: number): number {
  return maxClientTasks ?? Math.max(1, Math.ceil(maxTasks / 4));
}
