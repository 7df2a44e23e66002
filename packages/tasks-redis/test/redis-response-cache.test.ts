import { JSONDescriptor, type ServerHandle, Service, serve } from '@tiffin/core';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { RedisResponseCache } from '../src/index.js';
import { describeOnRedis } from './describe-on-redis.js';

/** One replica of a service with a cached API, counting its runs, on its own server and cache connection. */
async function replica(url: string) {
  const runs = { count: 0 };
  const svc = new Service('shared_cache', { version: '1.0.0' });
  svc.api({ input: new JSONDescriptor(), output: new JSONDescriptor(), cache: true }, function square(input) {
    runs.count++;
    const n = (input as { n: number }).n;
    return { square: n * n };
  });
  const cache = await RedisResponseCache.open(url);
  const server: ServerHandle = await serve(svc, {
    port: 0,
    host: '127.0.0.1',
    handleSignals: false,
    logger: false,
    cache,
  });
  return { runs, server, cache };
}

describeOnRedis('the response cache on a real redis-server', (redis) => {
  let a: Awaited<ReturnType<typeof replica>>;
  let b: Awaited<ReturnType<typeof replica>>;
  beforeAll(async () => {
    [a, b] = await Promise.all([replica(redis.url), replica(redis.url)]);
  });
  afterAll(async () => {
    for (const r of [a, b]) {
      await r.server.close();
      await r.cache.close();
    }
  });

  const square = (r: typeof a, n: number) =>
    fetch(`${r.server.url}/square`, {
      method: 'POST',
      body: JSON.stringify({ n }),
      headers: { 'content-type': 'application/json' },
    });

  it('an answer one replica computed is sent by the other from Redis, byte for byte', async () => {
    const first = await square(a, 12);
    expect(first.headers.get('tiffin-cache')).toBe('miss');
    const body = await first.text();
    // The miss keeps the answer without holding the call back: wait until Redis has it.
    for (;;) {
      const answer = await square(b, 12);
      if (answer.headers.get('tiffin-cache') === 'hit') {
        expect(await answer.text()).toBe(body);
        expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
        break;
      }
      await answer.body?.cancel();
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    expect(a.runs.count).toBe(1);
    expect(b.runs.count).toBeLessThanOrEqual(1);
  });

  it('reads a value that is not an entry of its own (another program’s, truncated) as a miss', async () => {
    const store = await RedisResponseCache.open(redis.url, { prefix: 'other:' });
    await store.set(
      'k',
      { status: 200, headers: [['content-type', 'text/plain']], body: new Uint8Array([1]) },
      0,
    );
    expect((await store.get('k'))?.body).toEqual(new Uint8Array([1]));
    const raw = new Redis(redis.url);
    await raw.set('other:bad', Buffer.from([0xff, 0xff, 0xff, 0xff, 1, 2]));
    await raw.set('other:json', Buffer.concat([Buffer.from([0, 0, 0, 4]), Buffer.from('nope')]));
    expect(await store.get('bad')).toBeUndefined();
    expect(await store.get('json')).toBeUndefined();
    expect(await store.get('missing')).toBeUndefined();
    raw.disconnect();
    await store.close();
  });
});
