import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NDArray, NumpyNdarray, Service } from '../../src/index.js';
import { start } from '../server/helpers.js';

/**
 * The response cache over the Open Inference Protocol (docs/cache.md, other protocols): `POST /v2/models/<api>/infer`
 * of an API with `cache` is answered from it for a repeated request, JSON or binary tensors, `Tiffin-Cache` saying
 * where the answer came from; `Cache-Control: no-cache` runs the function; `parameters.priority` and `timeout`
 * are not part of the key; an API with a `when` is not cached there.
 */
const runs: Record<string, number> = { double: 0, judged: 0 };
const svc = new Service('tensors', { version: '2' });
const ndarray = () => ({
  input: new NumpyNdarray({ dtype: 'float32' }),
  output: new NumpyNdarray({ dtype: 'float32' }),
});
svc.api({ ...ndarray(), cache: true }, function double(x: NDArray) {
  runs.double = (runs.double ?? 0) + 1;
  return NDArray.from(
    Array.from(x.data as Float32Array, (v) => v * 2),
    'float32',
  );
});
svc.api({ ...ndarray(), cache: { when: () => true } }, function judged(x: NDArray) {
  runs.judged = (runs.judged ?? 0) + 1;
  return x;
});

let server: Awaited<ReturnType<typeof start>>;
beforeAll(async () => {
  server = await start(svc);
});
afterAll(async () => {
  await server.close();
});

const infer = (api: string, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
  fetch(`${server.url}/v2/models/${api}/infer`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
const tensor = (data: number[]) => ({
  inputs: [{ name: 'input', datatype: 'FP32', shape: [data.length], data }],
});

describe('the Open Inference Protocol with cache', () => {
  it('answers a repeated JSON request from the cache, whatever its priority and timeout', async () => {
    const before = runs.double;
    const first = await infer('double', tensor([1, 2]));
    expect(first.headers.get('tiffin-cache')).toBe('miss');
    const body = await first.json();
    const again = await infer('double', { ...tensor([1, 2]), parameters: { priority: 0, timeout: 5 } });
    expect(again.status).toBe(200);
    expect(again.headers.get('tiffin-cache')).toBe('hit');
    expect(await again.json()).toEqual(body);
    expect(runs.double).toBe((before ?? 0) + 1);
    expect((await infer('double', tensor([1, 3]))).headers.get('tiffin-cache')).toBe('miss');
  });

  it('keeps a binary answer apart from the JSON one, and sends it back byte for byte', async () => {
    const binary = { ...tensor([4, 5]), parameters: { binary_data_output: true } };
    const first = await infer('double', binary);
    expect(first.headers.get('tiffin-cache')).toBe('miss');
    expect(first.headers.get('content-type')).toBe('application/octet-stream');
    const bytes = new Uint8Array(await first.arrayBuffer());
    const again = await infer('double', binary);
    expect(again.headers.get('tiffin-cache')).toBe('hit');
    expect(again.headers.get('inference-header-content-length')).toBe(
      first.headers.get('inference-header-content-length'),
    );
    expect(new Uint8Array(await again.arrayBuffer())).toEqual(bytes);
    const json = await infer('double', tensor([4, 5]));
    expect(json.headers.get('tiffin-cache')).toBe('miss');
    expect(json.headers.get('content-type')).toContain('application/json');
  });

  it('runs the function for Cache-Control: no-cache, and the echoed id is part of the key', async () => {
    await infer('double', tensor([7]));
    const before = runs.double ?? 0;
    const fresh = await infer('double', tensor([7]), { 'cache-control': 'no-cache' });
    expect(fresh.headers.get('tiffin-cache')).toBe('miss');
    const other = await infer('double', { ...tensor([7]), id: 'call-1' });
    expect(other.headers.get('tiffin-cache')).toBe('miss');
    expect(((await other.json()) as { id: string }).id).toBe('call-1');
    expect(runs.double).toBe(before + 2);
  });

  it('does not cache an API whose cache judges the decoded input (when)', async () => {
    for (let i = 0; i < 2; i++)
      expect((await infer('judged', tensor([1]))).headers.get('tiffin-cache')).toBeNull();
    expect(runs.judged).toBe(2);
  });

  it('counts the hits and misses by API', async () => {
    const text = await (await fetch(`${server.url}/metrics`)).text();
    expect(text).toMatch(/^tiffin_api_server_cache_hits_total\{api_name="double"[^}]*\} [1-9]/m);
    expect(text).toMatch(/^tiffin_api_server_cache_misses_total\{api_name="double"[^}]*\} [1-9]/m);
  });
});
