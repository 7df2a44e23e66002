export { TaskPool, type TaskPoolOptions } from './task-pool.js';
export { serveTasksInThread, type Task, Transferring } from './task-thread.js';
