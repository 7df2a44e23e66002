import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JSONDescriptor, MemoryLogger, type ServerHandle, Service, serve } from '../../src/index.js';
import { globalTracingRegistered } from '../../src/tracing/tracing.js';

const svc = new Service('timed').api(
  { name: 'echo', input: new JSONDescriptor(), output: new JSONDescriptor() },
  (value: unknown) => value,
);
const logger = new MemoryLogger();
let timed: ServerHandle;
let untimed: ServerHandle;

beforeAll(async () => {
  timed = await serve(svc, { port: 0, logger });
  untimed = await serve(svc, { port: 0, logger: false, serverTiming: false });
});
afterAll(async () => {
  await timed?.close();
  await untimed?.close();
});

const echo = (base: string) =>
  fetch(`${base}/echo`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
    },
    body: '[1]',
  });

describe('Server-Timing and tracing off', () => {
  it('an API answer says how long its decode, run and encode took; other routes do not', async () => {
    const res = await echo(timed.url);
    expect(res.status).toBe(200);
    expect(res.headers.get('server-timing')).toMatch(
      /^decode;dur=[\d.]+, run;dur=[\d.]+, encode;dur=[\d.]+$/,
    );
    expect((await fetch(`${timed.url}/livez`)).headers.get('server-timing')).toBeNull();
  });

  it('is left out with serverTiming: false', async () => {
    const res = await echo(untimed.url);
    expect(res.status).toBe(200);
    expect(res.headers.get('server-timing')).toBeNull();
  });

  it('without an OpenTelemetry SDK nothing traces: no trace id in the access log, a caller’s traceparent ignored', async () => {
    expect(globalTracingRegistered()).toBe(false);
    await echo(timed.url);
    const lines = logger.records.filter((r) => r.msg === 'request');
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(line.traceId).toBeUndefined();
  });
});
