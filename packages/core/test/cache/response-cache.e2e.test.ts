import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BadInput, JSONDescriptor, Service } from '../../src/index.js';
import { start } from '../server/helpers.js';

/** A service whose functions count their runs; `slow` waits for the test to let it go. */
const calls: Record<string, number> = { echo: 0, big: 0, slow: 0, seeded: 0, boom: 0, greet: 0 };
let release: () => void = () => {};
let released = new Promise<void>((resolve) => {
  release = resolve;
});

const svc = new Service('cached', { version: '3.1.0' });
const json = () => ({ input: new JSONDescriptor(), output: new JSONDescriptor() });
svc.api({ ...json(), cache: true }, function echo(input, ctx) {
  calls.echo = (calls.echo ?? 0) + 1;
  ctx.response.headers.set('x-made-by', 'echo');
  return { echoed: input };
});
svc.api({ ...json(), cache: { maxBytes: 4096 } }, function big(input) {
  calls.big = (calls.big ?? 0) + 1;
  return { text: 'x'.repeat((input as { n: number }).n) };
});
svc.api({ ...json(), cache: true }, async function slow(input) {
  calls.slow = (calls.slow ?? 0) + 1;
  await released;
  return { slow: input };
});
svc.api(
  { ...json(), cache: { when: (input) => typeof (input as { seed?: unknown }).seed === 'number' } },
  function seeded(input) {
    calls.seeded = (calls.seeded ?? 0) + 1;
    return { got: input, run: calls.seeded };
  },
);
svc.api({ ...json(), cache: { vary: ['Accept-Language'] } }, function greet(_input, ctx) {
  calls.greet = (calls.greet ?? 0) + 1;
  return { hello: ctx.request.headers.get('accept-language') === 'fr' ? 'bonjour' : 'hello' };
});
svc.api({ ...json(), cache: true }, function boom() {
  calls.boom = (calls.boom ?? 0) + 1;
  throw new BadInput('no');
});

let server: Awaited<ReturnType<typeof start>>;
beforeAll(async () => {
  server = await start(svc);
});
afterAll(async () => {
  await server.close();
});

const post = (api: string, body: string, headers: Record<string, string> = {}) =>
  fetch(`${server.url}/${api}`, {
    method: 'POST',
    body,
    headers: { 'content-type': 'application/json', ...headers },
  });

async function metric(name: string, api: string): Promise<number> {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name}{`) && l.includes(`api_name="${api}"`));
  return line ? Number(line.split(' ').at(-1)) : 0;
}

describe('the response cache (docs/cache.md)', () => {
  it('misses, then answers the same input (any key order) from the cache with the handler’s headers', async () => {
    const first = await post('echo', '{"a":1,"b":[2.5,"c"]}');
    expect(first.headers.get('tiffin-cache')).toBe('miss');
    const body = await first.text();
    const again = await post('echo', '{ "b": [2.5, "c"], "a": 1 }');
    expect(again.status).toBe(200);
    expect(again.headers.get('tiffin-cache')).toBe('hit');
    expect(again.headers.get('x-made-by')).toBe('echo');
    expect(await again.text()).toBe(body);
    expect(calls.echo).toBe(1);
    // Another value is another key: 2.5 and "2.5" differ.
    const other = await post('echo', '{"a":1,"b":["2.5","c"]}');
    expect(other.headers.get('tiffin-cache')).toBe('miss');
    expect(calls.echo).toBe(2);
    expect(await metric('tiffin_api_server_cache_hits_total', 'echo')).toBe(1);
    expect(await metric('tiffin_api_server_cache_misses_total', 'echo')).toBe(2);
  });

  it('Cache-Control: no-cache runs the function again and keeps the fresh answer', async () => {
    await post('echo', '{"fresh":1}');
    const fresh = await post('echo', '{"fresh":1}', { 'cache-control': 'no-cache' });
    expect(fresh.headers.get('tiffin-cache')).toBe('miss');
    const before = calls.echo;
    expect((await post('echo', '{"fresh":1}')).headers.get('tiffin-cache')).toBe('hit');
    expect(calls.echo).toBe(before);
  });

  it('keeps no answer over maxBytes, no error and no input the API declines (an unseeded generation)', async () => {
    expect((await post('big', '{"n":10}')).headers.get('tiffin-cache')).toBe('miss');
    expect((await post('big', '{"n":10}')).headers.get('tiffin-cache')).toBe('hit');
    await (await post('big', '{"n":100000}')).text();
    const huge = await post('big', '{"n":100000}');
    expect(huge.headers.get('tiffin-cache')).toBe('miss');
    expect(((await huge.json()) as { text: string }).text).toHaveLength(100000);
    expect(calls.big).toBe(3);

    expect((await post('boom', '{}')).status).toBe(400);
    expect((await post('boom', '{}')).status).toBe(400);
    expect(calls.boom).toBe(2);

    const unseeded = [await post('seeded', '{"prompt":"a"}'), await post('seeded', '{"prompt":"a"}')];
    expect(unseeded.map((r) => r.headers.get('tiffin-cache'))).toEqual([null, null]);
    expect((await post('seeded', '{"prompt":"a","seed":7}')).headers.get('tiffin-cache')).toBe('miss');
    expect((await post('seeded', '{"prompt":"a","seed":7}')).headers.get('tiffin-cache')).toBe('hit');
    expect(calls.seeded).toBe(3);
  });

  it('keys on the request headers the API varies on (vary), beside the input', async () => {
    const fr = { 'accept-language': 'fr' };
    expect(await (await post('greet', '{}', fr)).json()).toEqual({ hello: 'bonjour' });
    const en = await post('greet', '{}', { 'accept-language': 'en' });
    expect(en.headers.get('tiffin-cache')).toBe('miss');
    expect(await en.json()).toEqual({ hello: 'hello' });
    const again = await post('greet', '{}', fr);
    expect(again.headers.get('tiffin-cache')).toBe('hit');
    expect(await again.json()).toEqual({ hello: 'bonjour' });
    expect(calls.greet).toBe(2);
  });

  it('computes identical concurrent misses once (single flight)', async () => {
    const answers = Array.from({ length: 5 }, () => post('slow', '{"same":true}'));
    // All five are in the server before the first may finish.
    for (;;) {
      const text = await (await fetch(`${server.url}/metrics`)).text();
      const line = text
        .split('\n')
        .find((l) => l.startsWith('tiffin_api_server_request_in_progress{endpoint="/slow"'));
      if (line?.endsWith(' 5')) break;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    release();
    const done = await Promise.all(answers);
    expect(calls.slow).toBe(1);
    expect(done.map((r) => r.headers.get('tiffin-cache')).sort()).toEqual([
      'hit',
      'hit',
      'hit',
      'hit',
      'miss',
    ]);
    const bodies = await Promise.all(done.map((r) => r.json()));
    expect(new Set(bodies.map((b) => JSON.stringify(b))).size).toBe(1);
    released = Promise.resolve();
  });
});
