export {
  DEFAULT_TASK_STORE_OPTIONS,
  MemoryTaskStore,
  type MemoryTaskStoreOptions,
} from './memory-task-store.js';
export { pushedEvents } from './pushed-events.js';
export { TaskNotDone, TaskNotFound, TaskResultTooLarge, TasksFull } from './task-errors.js';
export type {
  ClaimedTask,
  TaskEvent,
  TaskProgress,
  TaskRequest,
  TaskResult,
  TaskStatus,
  TaskStore,
  TaskView,
} from './task-store.js';
