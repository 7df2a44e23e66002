import type { TaskStore } from '@tiffin/core';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { describeTaskRoutes } from '../../core/test/tasks/task-routes-contract.js';
import { describeTaskStore } from '../../core/test/tasks/task-store-contract.js';
import { describeTaskWebhooks } from '../../core/test/tasks/task-webhook-contract.js';
import { RedisTaskStore } from '../src/index.js';
import { hasRedisServer, RedisServer } from './redis-server.js';

const available = hasRedisServer();
if (!available)
  console.log(
    'redis-server is not installed: the Redis task store tests are skipped (apt-get install redis-server)',
  );

describe.runIf(available)('on a real redis-server', () => {
  let redis: RedisServer;
  beforeAll(async () => {
    redis = await RedisServer.start();
  });
  afterAll(async () => {
    await redis?.stop();
  });
  let n = 0;
  const queues = new WeakMap<TaskStore, { queue: string; limits: object }>();
  describeTaskStore(
    'RedisTaskStore',
    async (limits) => {
      const queue = `contract-${n++}`;
      const store = await RedisTaskStore.open({ url: redis.url, queue, leaseMs: 1000, ...limits });
      queues.set(store, { queue, limits });
      return store;
    },
    {
      async reopen(store) {
        const { queue, limits } = queues.get(store) as { queue: string; limits: object };
        // As a killed process: its connections gone, its running tasks not handed back.
        await (store as RedisTaskStore).close(false);
        return RedisTaskStore.open({ url: redis.url, queue, leaseMs: 1000, ...limits });
      },
    },
  );
  describeTaskWebhooks('RedisTaskStore', () =>
    RedisTaskStore.open({ url: redis.url, queue: `hooks-${n++}`, leaseMs: 1000 }),
  );
});
// A missing redis-server fails here rather than skipping the Redis tests quietly (.ci/run installs it).
it.runIf(!available)('needs redis-server', () => {
  throw new Error('redis-server is not installed: apt-get install -y redis-server');
});

describe.runIf(available)('the task routes on a real redis-server', () => {
  let redis: RedisServer;
  beforeAll(async () => {
    redis = await RedisServer.start();
  });
  afterAll(async () => {
    await redis?.stop();
  });
  const queues = new WeakMap<TaskStore, { queue: string; limits: object }>();
  describeTaskRoutes(
    'RedisTaskStore',
    async (limits) => {
      const queue = 'routes';
      const store = await RedisTaskStore.open({ url: redis.url, queue, leaseMs: 1000, ...limits });
      queues.set(store, { queue, limits });
      return store;
    },
    {
      async reopen(store) {
        const { queue, limits } = queues.get(store) as { queue: string; limits: object };
        await (store as RedisTaskStore).close(false);
        const again = await RedisTaskStore.open({ url: redis.url, queue, leaseMs: 1000, ...limits });
        queues.set(again, { queue, limits });
        return again;
      },
    },
  );
});
