import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeFill } from '../../onnx/test/fixtures/test-models.js';
import { ModelServers, postJson } from './model-servers.js';

/*
 * `tiffin serve model.onnx --concurrency N --queue M` (a real server process): the zero-code model's API gets a
 * queue of its own, with its gauges on /metrics, and takes the caller's Priority and Tiffin-Timeout.
 */

const servers = new ModelServers();
let url: string;

beforeAll(async () => {
  await servers.open('tiffin-queue-');
  url = await servers.serve([writeFill(servers.dir), '--concurrency', '1', '--queue', '8']);
}, 60_000);
afterAll(() => servers.close());

describe('a zero-code model with --concurrency and --queue', () => {
  it('serves through its own queue: Priority and Tiffin-Timeout taken, its depth and oldest age on /metrics', async () => {
    const calls = [0, 7, 3].map((u) =>
      fetch(`${url}/predict`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', priority: `u=${u}`, 'tiffin-timeout': '30' },
        body: '[2, 3]',
      }),
    );
    expect((await Promise.all(calls)).map((r) => r.status)).toEqual([200, 200, 200]);
    const metrics = await (await fetch(`${url}/metrics`)).text();
    expect(metrics).toMatch(/^tiffin_api_server_queue_depth\{api_name="fill",service_name="fill"\} 0$/m);
    expect(metrics).toMatch(/^tiffin_api_server_queue_oldest_seconds\{api_name="fill",/m);
  });

  it('refuses an unusable Tiffin-Timeout with 400 INVALID_TIMEOUT', async () => {
    const res = await fetch(`${url}/predict`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'tiffin-timeout': 'NaN' },
      body: '[2, 3]',
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { code: string }).code).toBe('INVALID_TIMEOUT');
    expect((await postJson(`${url}/predict`, [1, 2])).status).toBe(200);
  });
});
