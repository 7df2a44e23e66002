import { JSONDescriptor, Service } from '@tiffin/core';
import { expect, it } from 'vitest';
import { sleep, start } from '../../core/test/server/helpers.js';
import { RedisTaskStore } from '../src/index.js';
import { describeOnRedis } from './describe-on-redis.js';

/** Poll `read` until `done` holds of its value; past `withinMs` the last value is returned as it is. */
async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, withinMs: number): Promise<T> {
  const end = Date.now() + withinMs;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > end) return value;
    await sleep(100);
  }
}

describeOnRedis('readiness on a real redis-server', (redis) => {
  it('answers /readyz 503 while Redis hangs (frozen, its connections open), and 200 again once it answers', async () => {
    const store = await RedisTaskStore.open({ url: redis.url, queue: 'ready' });
    const svc = new Service('ready', { tasks: { store } }).api(
      { name: 'echo', input: new JSONDescriptor(), output: new JSONDescriptor(), task: true },
      async (input) => input,
    );
    const handle = await start(svc);
    // Each probe is answered while Redis hangs (none waits for it): a probe that hung would end in this abort.
    const readyz = async () =>
      (await fetch(`${handle.url}/readyz`, { signal: AbortSignal.timeout(20_000) })).status;
    try {
      expect(await readyz()).toBe(200);
      redis.freeze();
      try {
        expect(await until(readyz, (status) => status === 503, 20_000)).toBe(503);
        const res = await fetch(`${handle.url}/readyz`);
        expect(await res.json()).toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
      } finally {
        redis.thaw();
      }
      expect(await until(readyz, (status) => status === 200, 20_000)).toBe(200);
    } finally {
      redis.thaw();
      await handle.close();
      await store.close();
    }
  }, 90_000);
});
