import { JSONDescriptor, type ServerHandle, Service, serve } from '@tiffin/core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTracing, type Tracing } from '../src/index.js';
import { OtlpReceiver } from './otlp-receiver.js';

const svc = new Service('exemplary').api(
  { name: 'echo', input: new JSONDescriptor(), output: new JSONDescriptor() },
  (value: unknown) => value,
);

const SAMPLED = 'abcdefabcdefabcdefabcdefabcdef01';
const NOT_SAMPLED = 'abcdefabcdefabcdefabcdefabcdef00';
const OPENMETRICS = 'application/openmetrics-text; version=1.0.0';

const receiver = new OtlpReceiver();
let tracing: Tracing;
let server: ServerHandle;

beforeAll(async () => {
  process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT = await receiver.start();
  process.env.OTEL_EXPORTER_OTLP_PROTOCOL = 'http/json';
  tracing = await startTracing({ serviceName: 'exemplary' });
  server = await serve(svc, { port: 0, logger: false });
  // The caller's sampling decision is kept (the default sampler is parent-based): one sampled, one not.
  for (const [traceId, flags] of [
    [SAMPLED, '01'],
    [NOT_SAMPLED, '00'],
  ]) {
    const res = await fetch(`${server.url}/echo`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', traceparent: `00-${traceId}-00f067aa0ba902b7-${flags}` },
      body: '1',
    });
    expect(res.status).toBe(200);
  }
});
afterAll(async () => {
  await server?.close();
  await tracing?.shutdown();
  await receiver.close();
});

const scrape = (accept?: string) =>
  fetch(`${server.url}/metrics`, accept ? { headers: { accept } } : undefined);

describe('metrics exemplars (OpenMetrics)', () => {
  it('a sampled request’s trace id is the exemplar of its latency bucket; an unsampled one is none', async () => {
    const res = await scrape(`${OPENMETRICS},text/plain;version=0.0.4;q=0.5`);
    expect(res.headers.get('content-type')).toMatch(/^application\/openmetrics-text; version=1\.0\.0/);
    const text = await res.text();
    expect(text.endsWith('# EOF\n')).toBe(true);
    const withExemplar = text.split('\n').filter((line) => line.includes(' # {'));
    expect(withExemplar).toHaveLength(1);
    // `name{labels} count # {trace_id="…"} seconds timestamp`, on a bucket of the request's series.
    expect(withExemplar[0]).toMatch(
      new RegExp(
        `^tiffin_api_server_request_duration_seconds_bucket\\{le="[^"]+",endpoint="/echo",[^}]*http_response_code="200"\\} 2 # \\{trace_id="${SAMPLED}"\\} [\\d.e-]+ [\\d.]+$`,
      ),
    );
    expect(text).not.toContain(NOT_SAMPLED);
    // OpenMetrics names a counter's family without `_total` and its sample with it.
    expect(text).toContain('# TYPE tiffin_api_server_request counter');
    expect(text).toMatch(/^tiffin_api_server_request_total\{endpoint="\/echo",.*\} 2$/m);
    // The exemplar names a trace the receiver got: the request's server span.
    await vi.waitFor(
      async () => {
        await tracing.forceFlush();
        expect(receiver.spans.some((s) => s.traceId === SAMPLED && s.name === 'POST /echo')).toBe(true);
      },
      { timeout: 10_000, interval: 50 },
    );
  });

  it('the Prometheus text format stays as it was: no exemplar, counters named as registered', async () => {
    // After an OpenMetrics scrape (which renames counters in the registry that renders it).
    await scrape(OPENMETRICS);
    const res = await scrape();
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await res.text();
    expect(text).not.toContain(' # {');
    expect(text).not.toContain('# EOF');
    expect(text).toContain('# TYPE tiffin_api_server_request_total counter');
    expect(text).toMatch(/^tiffin_api_server_request_total\{endpoint="\/echo",.*\} 2$/m);
  });
});
