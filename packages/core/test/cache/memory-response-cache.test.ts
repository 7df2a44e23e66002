import { describe, expect, it } from 'vitest';
import { cacheKey } from '../../src/cache/cache-key.js';
import { MemoryResponseCache } from '../../src/cache/memory-response-cache.js';
import { answerBytes, type CachedAnswer } from '../../src/cache/response-cache.js';
import { NDArray } from '../../src/index.js';

const answer = (bytes: number): CachedAnswer => ({
  status: 200,
  headers: [['content-type', 'application/json']],
  body: new Uint8Array(bytes),
});

describe('MemoryResponseCache', () => {
  it('evicts the least recently used first when bytes would pass its capacity', () => {
    const one = answerBytes(answer(1000)) + 1;
    const cache = new MemoryResponseCache(one * 3);
    for (const key of ['a', 'b', 'c']) cache.set(key, answer(1000), 0);
    expect(cache.get('a')).toBeDefined(); // a is now the most recent: b goes first
    cache.set('d', answer(1000), 0);
    expect([...'abcd'].map((k) => cache.get(k) !== undefined)).toEqual([true, false, true, true]);
    expect(cache.bytes).toBeLessThanOrEqual(cache.capacityBytes);
    // An answer larger than the whole cache is not kept, and pushes nothing out.
    cache.set('huge', answer(one * 4), 0);
    expect(cache.get('huge')).toBeUndefined();
    expect(cache.size).toBe(3);
  });

  it('forgets an answer once its time to live has passed', async () => {
    const cache = new MemoryResponseCache();
    cache.set('short', answer(10), 5);
    cache.set('kept', answer(10), 0);
    expect(cache.get('short')).toBeDefined();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(cache.get('short')).toBeUndefined();
    expect(cache.get('kept')).toBeDefined();
    expect(cache.bytes).toBe(answerBytes(answer(10)) + 4);
  });
});

describe('cacheKey', () => {
  const key = (input: unknown) => cacheKey('svc', '1', 'api', input);

  it('is one fixed-size digest whatever the input, and tells values of other types apart', () => {
    expect(key('x'.repeat(5_000_000))).toMatch(/^[0-9a-f]{64}$/);
    expect(key({ a: 1, b: 2 })).toBe(key({ b: 2, a: 1 }));
    const distinct = [
      1,
      '1',
      [1],
      [[1]],
      [1, 2],
      [[1], 2],
      null,
      undefined,
      0,
      -0,
      new Uint8Array([0, 0, 128, 63]),
      new Float32Array([1]),
      new NDArray(new Float32Array([1]), [1]),
      new NDArray(new Float32Array([1]), [1, 1]),
      { a: '1' },
      { a: 1 },
      '\ud800',
      '\ufffd',
    ];
    expect(new Set(distinct.map(key)).size).toBe(distinct.length);
    expect(cacheKey('svc', '2', 'api', 1)).not.toBe(key(1));
    expect(cacheKey('svc', '1', 'other', 1)).not.toBe(key(1));
  });

  it('gives no key (not cached) to a hostile or opaque input: deep, cyclic, huge in values, a function', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 200; i++) deep = [deep];
    expect(key(deep)).toBeUndefined();
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(key(cyclic)).toBeUndefined();
    expect(key(new Array(150_000).fill(0))).toBeUndefined();
    expect(key({ f: () => 1 })).toBeUndefined();
    expect(key(new (class Opaque {})())).toBeUndefined();
  });
});
