// @tiffin/tasks-redis: task APIs on Redis through BullMQ (docs/tasks.md).
export { RedisTaskStore, type RedisTaskStoreOptions } from './redis-task-store.js';
