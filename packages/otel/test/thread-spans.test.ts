import {
  type LoadedModel,
  modelService,
  NumpyNdarray,
  type ServerHandle,
  Service,
  serve,
} from '@tiffin/core';
import { modelOnDisk, startModel } from '@tiffin/core/internal';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTracing, type Tracing } from '../src/index.js';
import { OtlpReceiver, type ReceivedSpan } from './otlp-receiver.js';

const CALLER_SPAN = '00f067aa0ba902b7';
const receiver = new OtlpReceiver();
let tracing: Tracing;
let model: LoadedModel;
const servers: ServerHandle[] = [];

/** The doubling model in one runner thread (`RunnerPool`, as the ONNX and TensorFlow.js runners run). */
async function doublingModel(batchable: boolean): Promise<LoadedModel> {
  const spec = { name: 'x', dtype: 'float32' as const, shape: [-1, 2] };
  const signature = { inputs: [spec], outputs: [{ ...spec, name: 'y' }], batchable, batch_dim: 0 };
  return startModel({
    module: 'test',
    model: modelOnDisk('doubler', '/nowhere', signature),
    workerModule: new URL('./fixtures/doubling-runner.ts', import.meta.url),
    init: () => ({}),
    openRunner: () => Promise.reject(new Error('runs in its thread')),
    options: { instances: 1 },
  });
}

beforeAll(async () => {
  process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT = await receiver.start();
  process.env.OTEL_EXPORTER_OTLP_PROTOCOL = 'http/protobuf';
  tracing = await startTracing({ serviceName: 'threads' });
  model = await doublingModel(true);
});
afterAll(async () => {
  for (const s of servers) await s.close();
  await model?.close();
  await tracing?.shutdown();
  await receiver.close();
});

async function spansOf(traceId: string, serverName: string): Promise<ReceivedSpan[]> {
  await vi.waitFor(
    async () => {
      await tracing.forceFlush();
      if (!receiver.spans.some((s) => s.traceId === traceId && s.name === serverName))
        throw new Error(`no ${serverName} span yet`);
    },
    { timeout: 10_000, interval: 50 },
  );
  return receiver.spans.filter((s) => s.traceId === traceId);
}
const byName = (spans: ReceivedSpan[], name: string) => spans.find((s) => s.name === name) as ReceivedSpan;

const post = (url: string, traceId: string, body: string) =>
  fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', traceparent: `00-${traceId}-${CALLER_SPAN}-01` },
    body,
  });

describe('spans of worker-thread calls', () => {
  it('a model call is a `runner` span under the call’s run span, with the thread’s own time', async () => {
    const server = await serve(modelService(model, { batching: false }), { port: 0, logger: false });
    servers.push(server);
    const traceId = '1a'.repeat(16);
    const res = await post(`${server.url}/predict`, traceId, '[[1,2],[3,4]]');
    expect(await res.json()).toEqual([
      [2, 4],
      [6, 8],
    ]);
    const spans = await spansOf(traceId, 'POST /predict');
    const runner = byName(spans, 'runner');
    expect(runner.parentSpanId).toBe(byName(spans, 'run').spanId);
    expect(runner.attributes['tiffin.model']).toBe('doubler');
    expect(runner.attributes['tiffin.thread.run_ms']).toBeGreaterThanOrEqual(0);
    expect(runner.attributes['tiffin.thread.wait_ms']).toBeGreaterThanOrEqual(0);
    expect(runner.status.code).toBe(0);
  });

  it('a batched model call is a `runner` span under the batch span', async () => {
    const server = await serve(modelService(model, { batching: { max_batch_size: 4, max_latency_ms: 1 } }), {
      port: 0,
      logger: false,
    });
    servers.push(server);
    const traceId = '2b'.repeat(16);
    const res = await post(`${server.url}/predict`, traceId, '[[1,2]]');
    expect(await res.json()).toEqual([[2, 4]]);
    await spansOf(traceId, 'POST /predict');
    const batch = receiver.spans.find(
      (s) => s.name === 'batch' && s.links.some((l) => l.traceId === traceId),
    ) as ReceivedSpan;
    const runner = receiver.spans.find((s) => s.name === 'runner' && s.parentSpanId === batch.spanId);
    expect(runner).toMatchObject({ traceId: batch.traceId, attributes: { 'tiffin.model': 'doubler' } });
  });

  it('a large JSON body decoded in a TaskPool thread is a `thread` span of the request', async () => {
    const svc = new Service('arrays').api(
      { name: 'total', input: new NumpyNdarray({ dtype: 'float64' }), output: new NumpyNdarray() },
      (x) => x,
    );
    const server = await serve(svc, { port: 0, logger: false });
    servers.push(server);
    const traceId = '3c'.repeat(16);
    // Over the size from which bodies are read off the event loop (1 MiB).
    const body = `[${Array.from({ length: 300_000 }, (_, i) => i % 10).join(',')}]`;
    expect((await post(`${server.url}/total`, traceId, body)).status).toBe(200);
    const spans = await spansOf(traceId, 'POST /total');
    const decoding = spans.find(
      (s) => s.name === 'thread' && s.attributes['tiffin.thread.pool'] === 'JSON decoding',
    ) as ReceivedSpan;
    expect(decoding.parentSpanId).toBe(byName(spans, 'POST /total').spanId);
    expect(decoding.attributes['tiffin.thread.run_ms']).toBeGreaterThan(0);
    expect(typeof decoding.attributes['tiffin.thread.task']).toBe('string');
  });
});
