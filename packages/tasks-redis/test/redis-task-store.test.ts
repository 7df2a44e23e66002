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
  it("sends an end's bookkeeping behind the completion: it acts once the job has finished, and once", async () => {
    const store = await open('ended-once');
    const { queue } = queues.get(store) as { queue: string };
    const probe = new Redis(redis.url);
    const clients = `tiffin:${queue}:clients`;
    const request = { method: 'POST', url: '/api/submit', headers: [], body: Buffer.from('{"x":1}') };
    try {
      const { id } = await store.submit('api', request, { client: '10.0.0.1' });
      expect(await probe.hget(clients, '10.0.0.1')).toBe('1');
      const claimed = await store.claim();
      expect(claimed?.id).toBe(id);
      // Its bookkeeping arriving before the job's end (as it may, sent without waiting) does nothing.
      const internals = store as unknown as {
        endings: { ended(job: unknown, end: object): Promise<number> };
        leases: { get(id: string): { job: unknown } | undefined };
      };
      const job = internals.leases.get(id)?.job;
      const end = { status: 'succeeded', seconds: 0.01 };
      expect(await internals.endings.ended(job, end)).toBe(1);
      expect(await probe.hget(clients, '10.0.0.1')).toBe('1');
      const events = store.events(id, AbortSignal.timeout(5000));
      expect((await events.next()).value).toMatchObject({ event: 'started' });
      await store.complete(id, { status: 200, headers: [], body: Buffer.from('{}') });
      // Its final event, once.
      expect((await events.next()).value).toMatchObject({ event: 'done' });
      expect((await events.next()).done).toBe(true);
      expect(await probe.hget(clients, '10.0.0.1')).toBe('0');
      // Sent again (a lost reply retried), it does nothing: the client's slot is not given back twice.
      expect(await internals.endings.ended(job, end)).toBe(2);
      expect(await probe.hget(clients, '10.0.0.1')).toBe('0');
      expect(await store.result(id)).toMatchObject({ status: 200 });
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
