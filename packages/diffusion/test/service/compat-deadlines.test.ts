import { MemoryLogger, type ServerHandle, serve } from '@tiffin/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDiffusionService, type DiffusionService } from '../../src/service/diffusion-service.js';
import { tinyDir } from '../helpers/tiny.js';
import { nextAnswerSent, recordProgress, type SeenEvent, waitFor } from './compat-helpers.js';
import { cancelledCount } from './service-helpers.js';

/**
 * A deadline stops the work of the A1111 and OpenAI routes: past it the route answers
 * 504, its running generation stops within one step, a generation queued behind it never starts, and the next call
 * is served at once. A1111's routes run under the server's `timeout` (the service sets none); the OpenAI routes
 * under the service's own `timeout` (`tiffin diffusion start --timeout`), not the server's longer default.
 */
const figures: string[] = [];
let a1111: { sd: DiffusionService; handle: ServerHandle };
let openai: { sd: DiffusionService; handle: ServerHandle };

beforeAll(async () => {
  const logger = new MemoryLogger();
  const quiet = { port: 0, host: '127.0.0.1', logger: false as const, handleSignals: false };
  const a = createDiffusionService({ modelDir: tinyDir('sd1'), backend: 'wasm', logger });
  a1111 = { sd: a, handle: await serve(a.service, { ...quiet, timeout: 3 }) };
  const o = createDiffusionService({ modelDir: tinyDir('sd1'), backend: 'wasm', timeout: 10, logger });
  openai = { sd: o, handle: await serve(o.service, quiet) };
}, 180_000);

afterAll(async () => {
  await a1111?.handle.close();
  await openai?.handle.close();
  console.info(`[compat deadline figures]\n  ${figures.join('\n  ')}`);
}, 60_000);

const post = (handle: ServerHandle, path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${handle.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });

/** What the events after `sentAt` (a 504 written) say: steps of other generations than `nextId`, starts. */
function after(events: SeenEvent[], sentAt: number, nextId: string | undefined) {
  const later = events.filter((e) => e.at > sentAt);
  return {
    stepsOfOthers: later.filter((e) => e.status === 'step' && e.request_id !== nextId).length,
    started: later.filter((e) => e.status === 'started').map((e) => e.request_id),
  };
}

describe("the A1111 routes under the server's timeout", () => {
  it('answer 504 at the deadline, stop the generation within a step, never start a queued one, then serve the next at once', async () => {
    const { sd, handle } = a1111;
    const log = recordProgress(sd);
    const sent = nextAnswerSent(handle);
    // 16 generations of 2 images at 150 steps: minutes of work on the tiny model.
    const long = post(handle, '/sdapi/v1/txt2img', {
      prompt: 'long',
      steps: 150,
      n_iter: 16,
      batch_size: 2,
      width: 32,
      height: 32,
      seed: 1,
    });
    await waitFor(() => sd.queue.size.running === 1);
    // Queued behind it, and past its own deadline (the client's 1 s) while the long one still runs: with the
    // server's 3 s alone, its deadline would come after the long one's, and it could rightly start in between.
    const queued = post(
      handle,
      '/sdapi/v1/txt2img',
      { prompt: 'queued', steps: 1, width: 8, height: 8 },
      { 'tiffin-timeout': '1' },
    );
    await waitFor(() => sd.queue.size.waiting === 1);
    const first = await long;
    const sentAt = await sent;
    expect(first.status).toBe(504);
    expect((await queued).status).toBe(504);
    // The generator is free once the step under way when the deadline passed has ended.
    await waitFor(() => sd.queue.size.running === 0 && sd.queue.size.waiting === 0);
    const next = await post(handle, '/sdapi/v1/txt2img', { prompt: 'next', steps: 1, width: 8, height: 8 });
    expect(next.status).toBe(200);
    expect(((await next.json()) as { images: string[] }).images).toHaveLength(1);
    log.stop();

    const nextId = log.events.filter((e) => e.status === 'started').at(-1)?.request_id;
    const queuedIds = log.events.filter((e) => e.status === 'queued').map((e) => e.request_id);
    const { stepsOfOthers, started } = after(log.events, sentAt, nextId);
    const longId = log.events.find((e) => e.status === 'started')?.request_id;
    // The long request's first generation ran, then was cancelled; none of its later ones started, nor the
    // queued request's: the only start after the 504 is the next request's.
    expect(log.events.filter((e) => e.request_id === longId).at(-1)?.status).toBe('cancelled');
    expect(started).toEqual([nextId]);
    expect(queuedIds).toHaveLength(3);
    expect(log.events.filter((e) => e.status === 'started')).toHaveLength(2);
    // Within one step: at most the step under way when the deadline passed completed after the 504.
    expect(stepsOfOthers).toBeLessThanOrEqual(1);
    expect(await cancelledCount(handle.url, 'timeout')).toBeGreaterThanOrEqual(1);
    const longSteps = log.events.filter((e) => e.status === 'step' && e.request_id === longId).length;
    figures.push(
      `A1111 txt2img of 16×2 images at 150 steps, server timeout 3 s: 504, its generation stopped after step ${longSteps} of 150 (${stepsOfOthers} after the 504), the queued request never started, the next one answered 200`,
    );
  }, 240_000);
});

describe("the OpenAI routes under the service's timeout", () => {
  it('answer 504 at the deadline, stop the generation within a step, then serve the next at once', async () => {
    const { sd, handle } = openai;
    const log = recordProgress(sd);
    const sent = nextAnswerSent(handle);
    // 4 images at the largest size and the model's 50 steps: minutes of work on the tiny model.
    const long = await post(handle, '/v1/images/generations', {
      prompt: 'long',
      n: 4,
      size: '64x64',
      response_format: 'b64_json',
    });
    const sentAt = await sent;
    expect(long.status).toBe(504);
    expect(((await long.json()) as { error?: { code?: string } }).error).toBeDefined();
    await waitFor(() => sd.queue.size.running === 0);
    const next = await post(handle, '/v1/images/generations', {
      prompt: 'next',
      n: 1,
      size: '8x8',
      response_format: 'b64_json',
    });
    expect(next.status).toBe(200);
    log.stop();

    const nextId = log.events.filter((e) => e.status === 'started').at(-1)?.request_id;
    const longId = log.events.find((e) => e.status === 'started')?.request_id;
    const { stepsOfOthers, started } = after(log.events, sentAt, nextId);
    expect(log.events.filter((e) => e.request_id === longId).at(-1)?.status).toBe('cancelled');
    expect(started).toEqual([nextId]);
    expect(stepsOfOthers).toBeLessThanOrEqual(1);
    const longSteps = log.events.filter((e) => e.status === 'step' && e.request_id === longId).length;
    figures.push(
      `OpenAI generations of 4 images at 64×64 and 50 steps, service timeout 10 s (server's 60 s): 504, its generation stopped after step ${longSteps} of 50 (${stepsOfOthers} after the 504), the next one answered 200`,
    );
  }, 240_000);
});
