import type { WireError } from './thread-errors.js';

/** What `TaskPool` sends a task thread: run one of its module's tasks. */
export interface TaskCall {
  id: number;
  task: string;
  args: unknown[];
}

/** What a task thread sends back, with the milliseconds it spent on the call (`ms`, its own clock). */
export type TaskAnswer =
  | { id: number; value: unknown; ms?: number }
  | { id: number; error: WireError; ms?: number };

/** What `TaskPool` hands each thread in `workerData` (the source bootstrap reads `entry`). */
export interface TaskBoot {
  entry: string;
}
