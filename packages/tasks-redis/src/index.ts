// @tiffin/tasks-redis: task APIs on Redis through BullMQ (docs/tasks.md).
export { RedisResponseCache, type RedisResponseCacheOptions } from './redis-response-cache.js';
export { RedisTaskStore, type RedisTaskStoreOptions } from './redis-task-store.js';
