import type { WireError } from './thread-errors.js';

/** What `TaskPool` sends a task thread: run one of its module's tasks. */
export interface TaskCall {
  id: number;
  task: string;
  args: unknown[];
}

/** What a task thread sends back. */
export type TaskAnswer = { id: number; value: unknown } | { id: number; error: WireError };

/** What `TaskPool` hands each thread in `workerData` (the source bootstrap reads `entry`). */
export interface TaskBoot {
  entry: string;
}
