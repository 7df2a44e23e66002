import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MemoryLogger, type ServerHandle, serve } from '@tiffin/core';
import { createDiffusionService } from '@tiffin/diffusion';
import { writeTinyPipeline } from '@tiffin/diffusion/testing';
import { startTracing, type Tracing } from '@tiffin/otel';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { OtlpReceiver, type ReceivedSpan } from '../../otel/test/otlp-receiver.js';

// A generation's trace on the tiny sd1 pipeline, exported over OTLP/HTTP (protobuf) to a real receiver.
const CALLER_TRACE = '9e'.repeat(16);
const CALLER_SPAN = '00f067aa0ba902b7';

const receiver = new OtlpReceiver();
let tracing: Tracing;
let handle: ServerHandle;

beforeAll(async () => {
  process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT = await receiver.start();
  process.env.OTEL_EXPORTER_OTLP_PROTOCOL = 'http/protobuf';
  tracing = await startTracing({ serviceName: 'diffusion' });
  const sd = createDiffusionService({
    modelDir: writeTinyPipeline(mkdtempSync(join(tmpdir(), 'tiffin-trace-sd1-')), { flavour: 'sd1' }),
    backend: 'wasm',
    maxQueue: 1,
    logger: new MemoryLogger(),
  });
  handle = await serve(sd.service, { port: 0, host: '127.0.0.1', logger: false, handleSignals: false });
}, 120_000);
afterAll(async () => {
  await handle?.close();
  await tracing?.shutdown();
  await receiver.close();
});

describe('a generation’s trace', () => {
  it('a server span; decode, run and encode under it; the queue wait and the generation, its steps as events, under the run', async () => {
    const res = await fetch(`${handle.url}/text2img`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01` },
      body: JSON.stringify({ prompt: 'a tiny cat', height: 16, width: 24, num_inference_steps: 2, seed: 7 }),
    });
    expect(res.status).toBe(200);
    await res.arrayBuffer();
    let spans: ReceivedSpan[] = [];
    await vi.waitFor(
      async () => {
        await tracing.forceFlush();
        spans = receiver.spans.filter((s) => s.traceId === CALLER_TRACE);
        expect(spans.map((s) => s.name)).toContain('POST /text2img');
      },
      { timeout: 10_000, interval: 50 },
    );
    const named = (name: string) => spans.find((s) => s.name === name) as ReceivedSpan;
    const server = named('POST /text2img');
    expect(server).toMatchObject({
      parentSpanId: CALLER_SPAN,
      attributes: { 'http.response.status_code': 200 },
    });
    for (const step of ['decode', 'run', 'encode']) expect(named(step).parentSpanId).toBe(server.spanId);
    const run = named('run');
    expect(named('generation queue')).toMatchObject({
      parentSpanId: run.spanId,
      attributes: { 'tiffin.generation.ahead': 0 },
    });
    const generation = named('generation');
    expect(generation).toMatchObject({
      parentSpanId: run.spanId,
      status: { code: 0 },
      attributes: {
        'tiffin.generation.kind': 'text2img',
        'tiffin.generation.width': 24,
        'tiffin.generation.height': 16,
        'tiffin.generation.steps': 2,
        'tiffin.generation.images': 1,
      },
    });
    expect(generation.attributes['tiffin.generation.worker_seconds']).toBeGreaterThan(0);
    expect(generation.events).toEqual(['step', 'step']);
  });
});
