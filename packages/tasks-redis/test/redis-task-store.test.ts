import type { TaskStore } from '@tiffin/core';
import { describeTaskRoutes } from '../../core/test/tasks/task-routes-contract.js';
import { describeTaskStore } from '../../core/test/tasks/task-store-contract.js';
import { describeTaskWebhooks } from '../../core/test/tasks/task-webhook-contract.js';
import { RedisTaskStore } from '../src/index.js';
import { describeOnRedis } from './describe-on-redis.js';

describeOnRedis('on a real redis-server', (redis) => {
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
describeOnRedis('the task routes on a real redis-server', (redis) => {
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
