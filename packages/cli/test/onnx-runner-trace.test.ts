import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { modelService, type ServerHandle, serve } from '@tiffin/core';
import { loadModel, type OnnxModel } from '@tiffin/onnx';
import { startTracing, type Tracing } from '@tiffin/otel';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { linearExpected, writeLinear } from '../../onnx/test/fixtures/test-models.js';
import { OtlpReceiver, type ReceivedSpan } from '../../otel/test/otlp-receiver.js';

// An ONNX model's call in its runner thread, traced: the `runner` span, exported to a real OTLP/HTTP receiver.
const CALLER_TRACE = '4e'.repeat(16);
const receiver = new OtlpReceiver();
let tracing: Tracing;
let model: OnnxModel;
let server: ServerHandle;

beforeAll(async () => {
  process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT = await receiver.start();
  process.env.OTEL_EXPORTER_OTLP_PROTOCOL = 'http/json';
  tracing = await startTracing({ serviceName: 'linear' });
  model = await loadModel(writeLinear(mkdtempSync(join(tmpdir(), 'tiffin-onnx-trace-'))), { instances: 1 });
  server = await serve(modelService(model, { batching: false }), { port: 0, logger: false });
}, 60_000);
afterAll(async () => {
  await server?.close();
  await model?.close();
  await tracing?.shutdown();
  await receiver.close();
});

it('an ONNX Runtime call is a `runner` span under the call’s run span, with its thread’s time', async () => {
  const x = [[1, 2, 3, 4]];
  const res = await fetch(`${server.url}/predict`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', traceparent: `00-${CALLER_TRACE}-00f067aa0ba902b7-01` },
    body: JSON.stringify(x),
  });
  const y = (await res.json()) as number[][];
  for (const [j, v] of (linearExpected(x)[0] ?? []).entries()) expect(y[0]?.[j]).toBeCloseTo(v, 5);
  let spans: ReceivedSpan[] = [];
  await vi.waitFor(
    async () => {
      await tracing.forceFlush();
      spans = receiver.spans.filter((s) => s.traceId === CALLER_TRACE);
      expect(spans.map((s) => s.name)).toEqual(expect.arrayContaining(['POST /predict', 'run', 'runner']));
    },
    { timeout: 10_000, interval: 50 },
  );
  const run = spans.find((s) => s.name === 'run') as ReceivedSpan;
  const runner = spans.find((s) => s.name === 'runner') as ReceivedSpan;
  expect(runner.parentSpanId).toBe(run.spanId);
  expect(runner.attributes['tiffin.model']).toBe('linear');
  expect(runner.attributes['tiffin.thread.run_ms']).toBeGreaterThan(0);
});
