// `@tiffin/core/tasks`: the task store contract, what a store of another package (`@tiffin/tasks-redis`) or of a
// user is written with: the `TaskStore` interface and the plain data it takes and answers, the errors it throws
// (each with its status and stable code), the helpers every store computes with (client shares, queue position
// and ETA, pushed events), and the built-in stores, to use or to build on. `TaskStore` stays on `@tiffin/core`
// too. The suite such a store must pass is `describeTaskStore` from `@tiffin/core/testing`. At most 36 names
// (`test/repo/core-entry.test.ts` counts them).

export { Cancelled } from './errors/index.js';
export { LmdbTaskStore, type LmdbTaskStoreOptions } from './tasks/lmdb-task-store.js';
export { MemoryTaskStore, type MemoryTaskStoreOptions } from './tasks/memory-task-store.js';
export { pushedEvents } from './tasks/pushed-events.js';
export { clientShare } from './tasks/task-bounds.js';
export {
  TaskInterrupted,
  TaskNotDone,
  TaskNotFound,
  TaskResultTooLarge,
  TaskStoreUnavailable,
  TasksClientFull,
  TasksFull,
  unknownTask,
} from './tasks/task-errors.js';
export { queuedEta, queuedEvent, RECENT_RUNS, runningEta } from './tasks/task-eta.js';
export { isTaskId } from './tasks/task-id.js';
export {
  type CancelAnswer,
  type ClaimedTask,
  FINAL_STATUSES,
  isFinalEvent,
  queuedView,
  type SubmitOptions,
  type TaskEvent,
  type TaskProgress,
  type TaskRequest,
  type TaskResult,
  type TaskStatus,
  type TaskStore,
  type TaskStoreStats,
  type TaskView,
} from './tasks/task-store.js';
