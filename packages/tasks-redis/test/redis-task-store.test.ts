import type { TaskStore } from '@tiffin/core';
import { describeTaskRoutes, describeTaskStore, describeTaskWebhooks } from '@tiffin/core/testing';
import { Redis } from 'ioredis';
import { expect, it } from 'vitest';
import { RedisTaskStore } from '../src/index.js';
import { describeOnRedis } from './describe-on-redis.js';

describeOnRedis('on a real redis-server', (redis) => {
  let n = 0;
  const queues = new WeakMap<TaskStore, { queue: string; limits: object }>();
  const open = async (name: string, limits: object = {}) => {
    const queue = `${name}-${n++}`;
    const store = await RedisTaskStore.open({ url: redis.url, queue, leaseMs: 1000, ...limits });
    queues.set(store, { queue, limits });
    return store;
  };
  const durable = {
    async reopen(store: TaskStore) {
      const { queue, limits } = queues.get(store) as { queue: string; limits: object };
      // As a killed process: its connections gone, its running tasks not handed back.
      await (store as RedisTaskStore).close(false);
      return RedisTaskStore.open({ url: redis.url, queue, leaseMs: 1000, ...limits });
    },
  };
  describeTaskStore('RedisTaskStore', (limits) => open('contract', limits), durable);
  describeTaskWebhooks('RedisTaskStore', () => open('hooks'), durable);
  it('hands a claim a queued task it ended on its cancel mark (a cancel that raced the claim) as ended', async () => {
    const store = await open('raced');
    const { queue } = queues.get(store) as { queue: string };
    const probe = new Redis(redis.url);
    try {
      const hook: [string, string] = ['tiffin-webhook-url', 'http://127.0.0.1:9/hook'];
      const { id } = await store.submit('api', {
        method: 'POST',
        url: '/api/submit',
        headers: [hook],
        body: Buffer.from('{}'),
      });
      // What a cancel writes before it removes the queued job; here a claim comes first and reads it.
      await probe.sadd(`tiffin:${queue}:events:cancelled`, id);
      const claimed = await store.claim();
      expect(claimed).toMatchObject({ id, api: 'api', ended: true });
      // The runner tells the task's webhook from the stored request.
      expect(claimed?.request.headers).toContainEqual(hook);
      expect(await store.status(id)).toMatchObject({ status: 'cancelled', error: { code: 'CANCELLED' } });
      expect(await store.claim()).toBeNull();
    } finally {
      probe.disconnect();
      await store.close();
    }
  });
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
