import { mkdtempSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MemoryLogger, type ServerHandle, serve } from '@tiffin/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDiffusionService, type DiffusionService } from '../../src/service/diffusion-service.js';
import type { GenerationEvent } from '../../src/service/generation-events.js';
import { writeTinyPipeline } from '../../src/tiny/write-tiny-pipeline.js';
import { callFrom, waitFor } from './compat-helpers.js';

/**
 * A client that leaves before its generation starts (docs/diffusion-service.md, queues): while the checkpoint it
 * chose loads, or while it waits in its kind's queue (`ctx.state.queue`). Its generation never starts, its place
 * in the queue is given up at once, the next request gets the slot, and nothing is logged as the server's fault.
 */
const models = mkdtempSync(join(tmpdir(), 'tiffin-sd-leaving-'));
const alpha = writeTinyPipeline(join(models, 'alpha'));
const beta = writeTinyPipeline(join(models, 'beta'), { weightSeed: 7 });
for (const dir of [alpha, beta])
  writeFileSync(join(dir, 'tiffin_defaults.json'), '{"num_inference_steps": 2}');
const logger = new MemoryLogger();
const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => unhandled.push(reason);
let sd: DiffusionService;
let server: ServerHandle;
const events: GenerationEvent[] = [];

beforeAll(async () => {
  process.on('unhandledRejection', onUnhandled);
  sd = createDiffusionService({
    modelDir: alpha,
    modelsDir: models,
    backend: 'wasm',
    logger,
    concurrency: 1,
    queue: 2,
  });
  server = await serve(sd.service, { port: 0, host: '127.0.0.1', logger, handleSignals: false });
  sd.generator.events.subscribe((e) => events.push(e));
}, 180_000);

afterAll(async () => {
  await server?.close();
  process.off('unhandledRejection', onUnhandled);
}, 60_000);

/** A POST from `from` whose client destroys its socket when `leave` is called, before any answer. */
function sendThenLeave(
  from: string,
  path: string,
  body: unknown,
): { leave: () => void; gone: Promise<void> } {
  const payload = Buffer.from(JSON.stringify(body));
  const req = request({
    host: '127.0.0.1',
    port: server.port,
    path,
    method: 'POST',
    localAddress: from,
    agent: false,
    headers: { 'content-type': 'application/json', 'content-length': String(payload.length) },
  });
  const gone = new Promise<void>((resolve, reject) => {
    req.on('response', () => reject(new Error(`${path} was answered before its client left`)));
    req.on('close', () => resolve());
    req.on('error', () => resolve());
  });
  req.end(payload);
  return { leave: () => req.destroy(), gone };
}

async function depth(api: string): Promise<number> {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  const line = text
    .split('\n')
    .find((l) => l.startsWith('tiffin_api_server_queue_depth{') && l.includes(`api_name="${api}"`));
  return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
}

/** The server blamed itself for nothing: no 5xx answered or logged, no error record, no unhandled rejection. */
function nothingLeaked(): void {
  const faults = logger.records.filter(
    (r) => r.level === 'error' || (typeof r.status === 'number' && r.status >= 500),
  );
  expect(faults).toEqual([]);
  expect(unhandled).toEqual([]);
}

const small = { prompt: 'a cat', steps: 2, width: 32, height: 32, seed: 5 };

describe('a client that leaves before its generation starts', () => {
  it('while its checkpoint loads: the load is kept, the generation never starts, the slot is free', async () => {
    const loads = sd.generator.pipelines.loads;
    const from = events.length;
    const leaving = sendThenLeave('127.0.0.2', '/sdapi/v1/txt2img', {
      ...small,
      override_settings: { sd_model_checkpoint: 'beta' },
    });
    // Its turn came and beta's worker is loading (alpha's evicted: one loaded at a time).
    await waitFor(() => sd.generator.pipelines.loads === loads + 1);
    leaving.leave();
    await leaving.gone;
    await waitFor(() => events.slice(from).some((e) => e.type === 'cancelled'));
    const its = events.slice(from);
    expect(its.map((e) => e.type)).toEqual(['queued', 'cancelled']);
    // The load went on for the requests after it: beta is resident, and a request for it loads nothing.
    expect(sd.generator.pipelines.loaded).toEqual([beta]);
    expect(sd.queue.size).toEqual({ running: 0, waiting: 0 });
    expect(await depth('text2img')).toBe(0);
    const next = await callFrom<{ images: string[] }>(server, '127.0.0.3', 'POST', '/sdapi/v1/txt2img', {
      ...small,
      override_settings: { sd_model_checkpoint: 'beta' },
    });
    expect(next.status).toBe(200);
    expect(next.body.images).toHaveLength(1);
    expect(sd.generator.pipelines.loads).toBe(loads + 1);
    nothingLeaked();
  }, 180_000);

  it('while queued in its kind’s queue (A1111 and OpenAI): it leaves the queue and never reaches the generator', async () => {
    // Minutes of work on the tiny model: it holds text2img's one slot until it is aborted.
    const holder = new AbortController();
    const long = fetch(`${server.url}/text2img`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        prompt: 'long',
        num_inference_steps: 150,
        height: 32,
        width: 32,
        model: 'beta',
      }),
      signal: holder.signal,
    }).catch(() => undefined);
    await waitFor(() => sd.queue.size.running === 1);
    const from = events.length;

    const a1111 = sendThenLeave('127.0.0.4', '/sdapi/v1/txt2img', {
      ...small,
      override_settings: { sd_model_checkpoint: 'beta' },
    });
    await waitFor(async () => (await depth('text2img')) === 1);
    a1111.leave();
    await a1111.gone;
    await waitFor(async () => (await depth('text2img')) === 0);

    const openai = sendThenLeave('127.0.0.5', '/v1/images/generations', {
      prompt: 'a cat',
      size: '32x32',
      model: 'beta',
    });
    await waitFor(async () => (await depth('text2img')) === 1);
    openai.leave();
    await openai.gone;
    await waitFor(async () => (await depth('text2img')) === 0);

    // The one slot goes to the request after them once the long one ends.
    const next = callFrom<{ images: string[] }>(server, '127.0.0.6', 'POST', '/sdapi/v1/txt2img', {
      ...small,
      override_settings: { sd_model_checkpoint: 'beta' },
    });
    await waitFor(async () => (await depth('text2img')) === 1);
    holder.abort();
    await long;
    const answer = await next;
    expect(answer.status).toBe(200);
    expect(answer.body.images).toHaveLength(1);
    // Since the long one began, the generator saw the next request alone: one job queued, started and done.
    expect(events.slice(from).map((e) => e.type)).toEqual(
      expect.arrayContaining(['cancelled', 'queued', 'started', 'done']),
    );
    const jobs = new Set(events.slice(from).map((e) => e.jobId));
    expect(jobs.size).toBe(2);
    expect(events.slice(from).filter((e) => e.type === 'queued')).toHaveLength(1);
    expect(await depth('text2img')).toBe(0);
    nothingLeaked();
  }, 300_000);
});
