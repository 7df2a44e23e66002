import * as grpc from '@grpc/grpc-js';
import { trace } from '@opentelemetry/api';
import {
  type GrpcServerHandle,
  inferenceClientConstructor,
  JSONDescriptor,
  MemoryLogger,
  type ServerHandle,
  Service,
  serve,
  serveGrpc,
  Text,
} from '@tiffin/core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTracing, type Tracing } from '../src/index.js';
import { OtlpReceiver, type ReceivedSpan } from './otlp-receiver.js';

// A caller's trace context, as an upstream service sends it (W3C Trace Context).
const CALLER_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';
const SERVER = 2;
const CONSUMER = 5;
const ERROR = 2;

let gateOpen: () => void = () => {};
let batchCalls = 0;
const svc = new Service('traced')
  .api({ name: 'echo', input: new JSONDescriptor(), output: new JSONDescriptor() }, (value: unknown, ctx) => {
    // A span of the user's own, through the OTel API's active context: a child of the call's run span.
    trace.getTracer('user-code').startSpan('user work').end();
    ctx.span?.setAttribute('user.note', 'set through ctx.span');
    return value;
  })
  .api({ name: 'boom', input: new JSONDescriptor(), output: new JSONDescriptor() }, () => {
    throw new Error('a bug');
  })
  .api({ name: 'steps', input: new JSONDescriptor(), output: new JSONDescriptor(), task: true }, (n, ctx) => {
    for (let k = 1; k <= (n as number); k++) ctx.progress(k, n as number);
    return n;
  })
  .api(
    {
      name: 'shout',
      input: new Text(),
      output: new Text(),
      batchable: true,
      max_batch_size: 8,
      max_latency_ms: 5000,
    },
    async (lines: string[]) => {
      batchCalls++;
      if (batchCalls === 1) await new Promise<void>((resolve) => (gateOpen = resolve));
      return lines.map((l) => l.toUpperCase());
    },
  );

// A mounted middleware of the user's: it runs inside the request's server span.
svc.mount(async (ctx, next) => {
  if (ctx.path !== '/hello') return await next();
  trace.getTracer('user-code').startSpan('in the mount').end();
  ctx.body = 'hi';
});

const receiver = new OtlpReceiver();
const logger = new MemoryLogger();
let tracing: Tracing;
let http: ServerHandle;
let rpc: GrpcServerHandle;
let base: string;

beforeAll(async () => {
  process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT = await receiver.start();
  process.env.OTEL_EXPORTER_OTLP_PROTOCOL = 'http/protobuf';
  process.env.OTEL_RESOURCE_ATTRIBUTES = 'deployment.environment.name=test';
  tracing = await startTracing({ serviceName: 'traced' });
  http = await serve(svc, { port: 0, logger });
  base = http.url;
  rpc = await serveGrpc(svc, {
    port: 0,
    runtime: http.app.runtime,
    runStartupHooks: false,
    log: () => undefined,
  });
});
afterAll(async () => {
  await rpc?.close();
  await http?.close();
  await tracing?.shutdown();
  await receiver.close();
});

/** The spans of one trace once its server span is in (answers go out before their span ends). */
async function spansOf(traceId: string, serverName: string): Promise<ReceivedSpan[]> {
  await vi.waitFor(
    async () => {
      await tracing.forceFlush();
      const got = receiver.spans.filter((s) => s.traceId === traceId && s.name === serverName);
      if (got.length === 0) throw new Error(`no ${serverName} span yet`);
    },
    { timeout: 10_000, interval: 50 },
  );
  return receiver.spans.filter((s) => s.traceId === traceId);
}

const byName = (spans: ReceivedSpan[], name: string) => spans.find((s) => s.name === name) as ReceivedSpan;

/** POST `body` as JSON to `url`, the caller's span `CALLER_SPAN` of trace `traceId` in its `traceparent`. */
const post = (url: string, traceId: string, body: string) =>
  fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', traceparent: `00-${traceId}-${CALLER_SPAN}-01` },
    body,
  });

describe('traces of HTTP calls (OTLP/HTTP protobuf to a real receiver)', () => {
  it('continue the caller’s trace: a server span with the HTTP conventions, its steps and the user’s span', async () => {
    const res = await fetch(`${base}/echo`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01`,
        tracestate: 'vendor=abc',
      },
      body: '{"a":1}',
    });
    expect(res.status).toBe(200);
    const timing = res.headers.get('server-timing') ?? '';
    expect(timing).toMatch(/^decode;dur=[\d.]+, run;dur=[\d.]+, encode;dur=[\d.]+$/);
    const spans = await spansOf(CALLER_TRACE, 'POST /echo');
    const server = byName(spans, 'POST /echo');
    expect(server).toMatchObject({
      parentSpanId: CALLER_SPAN,
      traceState: 'vendor=abc',
      kind: SERVER,
      encoding: 'protobuf',
      status: { code: 0 },
    });
    expect(server.attributes).toMatchObject({
      'http.request.method': 'POST',
      'http.route': '/echo',
      'url.path': '/echo',
      'http.response.status_code': 200,
      'server.address': '127.0.0.1',
      'server.port': Number(new URL(base).port),
    });
    expect(server.resource).toMatchObject({
      'service.name': 'traced',
      'deployment.environment.name': 'test',
    });
    for (const step of ['decode', 'run', 'encode'])
      expect(byName(spans, step).parentSpanId).toBe(server.spanId);
    expect(byName(spans, 'user work').parentSpanId).toBe(byName(spans, 'run').spanId);
    expect(byName(spans, 'run').attributes['user.note']).toBe('set through ctx.span');
    // The access-log line names the trace.
    const line = logger.records.find((r) => r.msg === 'request' && r.traceId === CALLER_TRACE);
    expect(line).toMatchObject({ path: '/echo', status: 200 });
  });

  it('a mounted route runs inside the server span', async () => {
    const traceId = '7'.repeat(32);
    const res = await fetch(`${base}/hello`, { headers: { traceparent: `00-${traceId}-${CALLER_SPAN}-01` } });
    expect(await res.text()).toBe('hi');
    // No route pattern: the span is named by its method alone.
    const spans = await spansOf(traceId, 'GET');
    const server = byName(spans, 'GET');
    expect(server).toMatchObject({ parentSpanId: CALLER_SPAN, kind: SERVER });
    expect(server.attributes['http.route']).toBeUndefined();
    expect(server.attributes).toMatchObject({ 'url.path': '/hello', 'http.response.status_code': 200 });
    expect(byName(spans, 'in the mount').parentSpanId).toBe(server.spanId);
  });

  it('a 400 is the client’s: its span carries the status, not an error', async () => {
    const traceId = 'aaaabbbbccccddddeeeeffff00001111';
    const res = await post(`${base}/echo`, traceId, '{"a":');
    expect(res.status).toBe(400);
    const server = byName(await spansOf(traceId, 'POST /echo'), 'POST /echo');
    expect(server.attributes['http.response.status_code']).toBe(400);
    expect(server.status.code).toBe(0);
  });

  it('a 500 is the server’s: an error span, and the error log names the trace', async () => {
    const traceId = 'bbbbccccddddeeeeffff000011112222';
    const res = await post(`${base}/boom`, traceId, '1');
    expect(res.status).toBe(500);
    const server = byName(await spansOf(traceId, 'POST /boom'), 'POST /boom');
    expect(server.status.code).toBe(ERROR);
    expect(server.events).toContain('exception');
    expect(logger.records.find((r) => r.msg === 'unhandled error')?.traceId).toBe(traceId);
  });

  it('a batch is a span of its own, linked to each of its callers; each caller’s queue wait is a child', async () => {
    const send = (line: string, n: number) =>
      fetch(`${base}/shout`, {
        method: 'POST',
        headers: { traceparent: `00-${String(n).repeat(32)}-${CALLER_SPAN}-01` },
        body: line,
      });
    const first = send('a', 1);
    await vi.waitFor(() => expect(batchCalls).toBe(1));
    const rest = [send('b', 2), send('c', 3)];
    await vi.waitFor(() => expect(http.app.runtime.batcher('shout')?.depth).toBe(2));
    gateOpen();
    expect(await Promise.all([first, ...rest].map(async (r) => (await r).text()))).toEqual(['A', 'B', 'C']);
    const two = await spansOf('2'.repeat(32), 'POST /shout');
    const three = await spansOf('3'.repeat(32), 'POST /shout');
    const batch = receiver.spans.find(
      (s) => s.name === 'batch' && s.links.some((l) => l.traceId === '2'.repeat(32)),
    ) as ReceivedSpan;
    expect(batch.attributes['tiffin.batch.size']).toBe(2);
    expect(batch.links.map((l) => l.spanId).sort()).toEqual(
      [byName(two, 'POST /shout').spanId, byName(three, 'POST /shout').spanId].sort(),
    );
    expect(byName(two, 'queue').parentSpanId).toBe(byName(two, 'POST /shout').spanId);
    expect(byName(two, 'run').links[0]?.spanId).toBe(batch.spanId);
  });
});

describe('traces of tasks', () => {
  it('a task’s run continues its submit’s trace (the context is stored with the task), its steps as events', async () => {
    const traceId = '5'.repeat(32);
    const submit = await post(`${base}/steps/submit`, traceId, '3');
    expect(submit.status).toBe(202);
    const spans = await spansOf(traceId, 'task steps');
    const submitted = byName(spans, 'POST /steps/submit');
    expect(submitted.parentSpanId).toBe(CALLER_SPAN);
    const run = byName(spans, 'task steps');
    expect(run).toMatchObject({ parentSpanId: submitted.spanId, kind: CONSUMER });
    expect(run.attributes).toMatchObject({
      'tiffin.api': 'steps',
      'tiffin.task.attempt': 1,
      'tiffin.task.outcome': 'succeeded',
    });
    expect(run.events.filter((e) => e === 'step')).toHaveLength(3);
    expect(byName(spans, 'run').parentSpanId).toBe(run.spanId);
  });
});

describe('tracing from code', () => {
  it('a server given a tracer traces through it (here an SDK exporting OTLP/JSON); one given false makes no span', async () => {
    process.env.OTEL_EXPORTER_OTLP_PROTOCOL = 'http/json';
    const json = await startTracing({ serviceName: 'json', register: false });
    const traced = await serve(svc, { port: 0, logger: false, tracing: json.provider.getTracer('mine') });
    const untraced = await serve(svc, { port: 0, logger: false, tracing: false });
    try {
      const call = (url: string, traceId: string) => post(`${url}/echo`, traceId, '1');
      const off = 'f'.repeat(32);
      expect((await call(untraced.url, off)).status).toBe(200);
      expect((await call(traced.url, 'e'.repeat(32))).status).toBe(200);
      await vi.waitFor(
        async () => {
          await json.forceFlush();
          expect(receiver.spans.some((s) => s.encoding === 'json' && s.name === 'POST /echo')).toBe(true);
        },
        { timeout: 10_000, interval: 50 },
      );
      const server = receiver.spans.find(
        (s) => s.encoding === 'json' && s.name === 'POST /echo',
      ) as ReceivedSpan;
      expect(server).toMatchObject({ traceId: 'e'.repeat(32), parentSpanId: CALLER_SPAN });
      expect(server.resource['service.name']).toBe('json');
      await tracing.forceFlush();
      expect(receiver.spans.filter((s) => s.traceId === off)).toEqual([]);
    } finally {
      await traced.close();
      await untraced.close();
      await json.shutdown();
    }
  });
});

describe('traces of gRPC calls', () => {
  it('continue the trace from the call’s metadata, with the RPC conventions', async () => {
    const traceId = '0123456789abcdef0123456789abcdef';
    const Ctor = inferenceClientConstructor();
    const client = new Ctor(rpc.address, grpc.credentials.createInsecure()) as unknown as grpc.Client & {
      Call(req: object, md: grpc.Metadata, cb: (err: grpc.ServiceError | null) => void): void;
    };
    const md = new grpc.Metadata();
    md.set('traceparent', `00-${traceId}-${CALLER_SPAN}-01`);
    const err = await new Promise((resolve) =>
      client.Call({ api_name: 'echo', json: { struct_value: { fields: {} } } }, md, resolve),
    );
    client.close();
    expect(err).toBeNull();
    const name = 'bentoml.grpc.v1.BentoService/Call';
    const spans = await spansOf(traceId, name);
    const server = byName(spans, name);
    expect(server).toMatchObject({ parentSpanId: CALLER_SPAN, kind: SERVER });
    expect(server.attributes).toMatchObject({
      'rpc.system': 'grpc',
      'rpc.service': 'bentoml.grpc.v1.BentoService',
      'rpc.method': 'Call',
      'rpc.grpc.status_code': 0,
    });
    expect(byName(spans, 'run').parentSpanId).toBe(server.spanId);
  });
});
