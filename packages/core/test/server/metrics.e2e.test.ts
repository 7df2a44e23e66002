import { Counter } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BadInput, Service } from '../../src/index.js';
import { PlainText, start } from './helpers.js';

const svc = new Service('metered', { version: '2.0.0' });
svc.api({ input: new PlainText(), output: new PlainText() }, function echo(input) {
  if (input === 'bad') throw new BadInput('bad input');
  return input;
});

let server: Awaited<ReturnType<typeof start>>;
beforeAll(async () => {
  server = await start(svc);
});
afterAll(async () => {
  await server.close();
});

describe('/metrics (docs/spec/io-descriptors.md §10.6, D6 prefix)', () => {
  it('exposes per-API request counter, latency histogram and in-progress gauge', async () => {
    for (const body of ['a', 'b', 'bad']) {
      await fetch(`${server.url}/echo`, { method: 'POST', body, headers: { 'content-type': 'text/plain' } });
    }
    await fetch(`${server.url}/livez`);
    const res = await fetch(`${server.url}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await res.text();
    const labels = 'endpoint="/echo",service_name="metered",service_version="2.0.0"';
    expect(text).toContain(`tiffin_api_server_request_total{${labels},http_response_code="200"} 2`);
    expect(text).toContain(`tiffin_api_server_request_total{${labels},http_response_code="400"} 1`);
    expect(text).toContain(
      `tiffin_api_server_request_duration_seconds_count{${labels},http_response_code="200"} 2`,
    );
    expect(text).toContain(
      `tiffin_api_server_request_duration_seconds_bucket{le="0.005",${labels},http_response_code="200"}`,
    );
    expect(text).toContain(`tiffin_api_server_request_in_progress{${labels}} 0`);
    expect(text).toContain('endpoint="/livez"');
    expect(text).toContain('tiffin_api_server_last_request_timestamp_seconds');
    // The scrape itself is not measured.
    expect(text).not.toContain('endpoint="/metrics"');
  });

  it('renders user prom-client metrics registered in the server registry', async () => {
    const custom = new Counter({ name: 'quickstart_predictions_total', help: 'x', registers: [] });
    server.app.metrics.registry.registerMetric(custom);
    custom.inc(3);
    const text = await (await fetch(`${server.url}/metrics`)).text();
    expect(text).toContain('quickstart_predictions_total 3');
  });

  it('can be turned off', async () => {
    const off = await start(svc, { metrics: false });
    try {
      expect((await fetch(`${off.url}/metrics`)).status).toBe(404);
    } finally {
      await off.close();
    }
  });
});
