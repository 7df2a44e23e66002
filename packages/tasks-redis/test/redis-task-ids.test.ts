import { JSONDescriptor, Service } from '@tiffin/core';
import { NOT_TASK_IDS } from '@tiffin/core/testing';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { start } from '../../core/test/server/helpers.js';
import { RedisTaskStore } from '../src/index.js';
import { describeOnRedis } from './describe-on-redis.js';

/**
 * Names of BullMQ's own keys under a queue (`tiffin:<queue>:<name>`) and other ids that are not task ids (the
 * contract's, and more of BullMQ's): each is answered as an unknown task, never handed to Redis as part of a key
 * (where a key of another type answers an error, and the client a 503).
 */
const NOT_IDS = [
  ...NOT_TASK_IDS,
  'stalled',
  'completed',
  'marker',
  '%E2%98%83',
  'stalled-check%00',
  '00000000-0000-4000-8000-00000000000G',
];

describeOnRedis('task ids on a real redis-server', (redis) => {
  let store: RedisTaskStore;
  let handle: Awaited<ReturnType<typeof start>>;
  let probe: Redis;
  const queue = 'ids';
  beforeAll(async () => {
    store = await RedisTaskStore.open({ url: redis.url, queue });
    const svc = new Service('ids', { tasks: { store } }).api(
      { name: 'echo', input: new JSONDescriptor(), output: new JSONDescriptor(), task: true },
      async (input, ctx) => {
        const { ms } = input as { ms: number };
        await new Promise((resolve) => setTimeout(resolve, ms));
        return { ok: !ctx.request.signal.aborted };
      },
    );
    handle = await start(svc);
    probe = new Redis(redis.url);
  });
  afterAll(async () => {
    probe?.disconnect();
    await handle?.close();
    await store?.close();
  });

  it('answers 404 JOB_NOT_FOUND, not 503, for BullMQ key names and other ids not of the form the store mints', async () => {
    const submit = async (ms: number) => {
      const res = await fetch(`${handle.url}/echo/submit`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ ms }),
      });
      return ((await res.json()) as { id: string }).id;
    };
    // A finished task, a running one and a queued one: BullMQ's lists, sets and streams of this queue exist.
    const done = await submit(0);
    for (;;) {
      const view = (await (await fetch(`${handle.url}/echo/status?id=${done}`)).json()) as { status: string };
      if (view.status === 'succeeded') break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const running = await submit(60_000);
    await submit(60_000);
    const types = Object.fromEntries(
      await Promise.all(
        ['meta', 'events', 'wait', 'active', 'completed'].map(
          async (key) => [key, await probe.type(`tiffin:${queue}:${key}`)] as const,
        ),
      ),
    );
    // What an id reaching Redis as a key would meet (a key of another type than a job's hash).
    expect(types).toMatchObject({ events: 'stream', wait: 'list', active: 'list', completed: 'zset' });
    for (const op of ['status', 'get', 'events']) {
      for (const id of NOT_IDS) {
        const res = await fetch(`${handle.url}/echo/${op}?id=${id}`);
        expect({ op, id, status: res.status, code: ((await res.json()) as { code?: string }).code }).toEqual({
          op,
          id,
          status: 404,
          code: 'JOB_NOT_FOUND',
        });
      }
    }
    for (const id of NOT_IDS) {
      const res = await fetch(`${handle.url}/echo/cancel?id=${id}`, { method: 'POST' });
      expect({ id, status: res.status }).toEqual({ id, status: 404 });
    }
    // A task id of the form still reaches the store.
    const res = await fetch(`${handle.url}/echo/cancel?id=${running}`, { method: 'POST' });
    expect(res.status).toBe(200);
  });
});
