import { closeSync, openSync, readFileSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { join } from 'node:path';
import { MemoryLogger, type ServerHandle, serve } from '@tiffin/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDiffusionService, type DiffusionService } from '../../src/service/diffusion-service.js';
import { ModelTooLargeError } from '../../src/service/model-fit.js';
import type { ProgressEvent } from '../../src/service/progress.js';
import { tinyDir } from '../helpers/tiny.js';
import { cancelledCount } from './service-helpers.js';

/**
 * Diffusion under faults on the tiny pipeline: a client that leaves or a request that
 * times out cancels its running generation at the next step and frees the worker; Retry-After follows
 * measured step times; readiness needs a warm-up generation that ran; a model too large for the backend
 * fails at start.
 */
const figures: string[] = [];
const logger = new MemoryLogger();
let handle: ServerHandle;
let sd: DiffusionService;

const post = (url: string, body: unknown, signal?: AbortSignal) =>
  fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal,
  });

/** Every progress event from now on, in order, with the time it was seen. */
function record(service: DiffusionService): {
  events: Array<ProgressEvent & { at: number }>;
  stop: () => void;
} {
  const controller = new AbortController();
  const events: Array<ProgressEvent & { at: number }> = [];
  (async () => {
    for await (const e of service.progress.events(controller.signal))
      events.push({ ...e, at: performance.now() });
  })();
  return { events, stop: () => controller.abort() };
}

async function waitFor(condition: () => boolean, timeoutMs = 60_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > until) throw new Error('condition not reached');
    await new Promise((r) => setTimeout(r, 2));
  }
}

beforeAll(async () => {
  sd = createDiffusionService({ modelDir: tinyDir('sd1'), backend: 'wasm', maxQueue: 1, logger });
  handle = await serve(sd.service, { port: 0, host: '127.0.0.1', logger: false, handleSignals: false });
}, 120_000);

afterAll(async () => {
  await handle?.close();
  console.info(`[diffusion fault figures]\n  ${figures.join('\n  ')}`);
});

describe('cancellation', () => {
  it('a client killed at step 2 of 50 stops its generation; the next queued request starts within one step', async () => {
    const log = record(sd);
    // When the server learns that the long request's client left (its response closes unfinished): steps are
    // counted from then, not from the client's abort, whose way to the server takes longer on a loaded machine.
    let noticedAt: number | undefined;
    const first = (_req: unknown, res: ServerResponse) => {
      handle.server.off('request', first);
      res.once('close', () => {
        noticedAt = performance.now();
      });
    };
    handle.server.on('request', first);
    const leaving = new AbortController();
    const long = post(
      `${handle.url}/text2img`,
      { prompt: 'long', height: 32, width: 32, num_inference_steps: 50, seed: 1 },
      leaving.signal,
    ).catch((e: Error) => e);
    await waitFor(() => sd.queue.size.running === 1);
    const next = post(`${handle.url}/text2img`, {
      prompt: 'next',
      height: 16,
      width: 16,
      num_inference_steps: 2,
      seed: 2,
    });
    await waitFor(() => sd.queue.size.waiting === 1);
    const longId = () => log.events.find((e) => e.status === 'started')?.request_id;
    await waitFor(() =>
      log.events.some((e) => e.status === 'step' && e.step === 2 && e.request_id === longId()),
    );
    const goneBefore = await cancelledCount(handle.url, 'client_gone');
    const killedAt = performance.now();
    leaving.abort();
    expect(await long).toBeInstanceOf(Error);
    expect((await next).status).toBe(200);
    log.stop();

    const id = longId();
    const mine = log.events.filter((e) => e.request_id === id);
    expect(noticedAt).toBeGreaterThanOrEqual(killedAt);
    const stepsAfterKill = mine.filter((e) => e.status === 'step' && e.at > noticedAt!).length;
    const nextStarted = log.events.find((e) => e.status === 'started' && e.request_id !== id);
    expect(mine.at(-1)?.status).toBe('cancelled');
    // Counted on /metrics by why it stopped.
    expect((await cancelledCount(handle.url, 'client_gone')) - goneBefore).toBe(1);
    expect(mine.filter((e) => e.status === 'step').length).toBeLessThan(50);
    // Within one step: at most the step under way when the server learned the client left completes before the
    // next job starts.
    expect(stepsAfterKill).toBeLessThanOrEqual(1);
    expect(nextStarted).toBeDefined();
    const lastStepAt = mine.filter((e) => e.status === 'step').at(-1)!.at;
    const waitMs = nextStarted!.at - killedAt;
    figures.push(
      `client killed at step 2/50: ${stepsAfterKill} more step(s) ran (the one under way); the next request started ${waitMs.toFixed(0)} ms after the kill, ${(nextStarted!.at - lastStepAt).toFixed(0)} ms after that step ended`,
    );
  });

  it('a request past its timeout gets 504 and its generation is cancelled, freeing the worker', async () => {
    const timed = createDiffusionService({
      modelDir: tinyDir('sd1'),
      backend: 'wasm',
      timeout: 2,
      logger: new MemoryLogger(),
    });
    const server = await serve(timed.service, {
      port: 0,
      host: '127.0.0.1',
      logger: false,
      handleSignals: false,
    });
    try {
      const log = record(timed);
      const res = await post(`${server.url}/text2img`, {
        prompt: 'slow',
        height: 64,
        width: 64,
        num_inference_steps: 150,
        seed: 3,
      });
      expect(res.status).toBe(504);
      await waitFor(() => log.events.some((e) => e.status === 'cancelled'));
      const cancelled = log.events.find((e) => e.status === 'cancelled');
      const steps = log.events.filter((e) => e.status === 'step' && e.request_id === cancelled?.request_id);
      expect(steps.length).toBeLessThan(150);
      expect(await cancelledCount(server.url, 'timeout')).toBe(1);
      expect(await cancelledCount(server.url, 'client_gone')).toBe(0);
      await waitFor(() => timed.queue.size.running === 0);
      const after = await post(`${server.url}/text2img`, {
        prompt: 'after',
        height: 8,
        width: 8,
        num_inference_steps: 1,
      });
      expect(after.status).toBe(200);
      log.stop();
      figures.push(`504 after 2 s: generation cancelled after step ${steps.length} of 150`);
    } finally {
      await server.close();
    }
  }, 120_000);
});

describe('Retry-After', () => {
  it('is computed from measured step times and the work queued, and grows with it', async () => {
    const retryAfter = async (steps: number) => {
      const running = post(`${handle.url}/text2img`, {
        prompt: 'r',
        height: 32,
        width: 32,
        num_inference_steps: steps,
        seed: 4,
      });
      await waitFor(() => sd.queue.size.running === 1);
      const waiting = post(`${handle.url}/text2img`, {
        prompt: 'w',
        height: 32,
        width: 32,
        num_inference_steps: steps,
        seed: 5,
      });
      await waitFor(() => sd.queue.size.waiting === 1);
      const refused = await post(`${handle.url}/text2img`, {
        prompt: 'x',
        height: 16,
        width: 16,
        num_inference_steps: 1,
      });
      expect(refused.status).toBe(503);
      const seconds = Number(refused.headers.get('retry-after'));
      expect(Number.isInteger(seconds) && seconds >= 1).toBe(true);
      const estimate = sd.queue.clock.estimate((((32 * 32) / 4) * 2) / 16);
      await Promise.all([running, waiting]);
      return { seconds, estimate };
    };
    const short = await retryAfter(4);
    const long = await retryAfter(40);
    figures.push(
      `Retry-After with 2 × 4 steps at 32×32 ahead: ${short.seconds} s; with 2 × 40 steps: ${long.seconds} s (measured ${(long.estimate.step * 1000).toFixed(0)} ms/step)`,
    );
    expect(long.seconds).toBeGreaterThan(short.seconds);
  }, 120_000);
});

describe('start-up', () => {
  it('logs totalSteps as num_inference_steps asked for (the folder scheduler is PNDM)', async () => {
    const res = await post(`${handle.url}/text2img`, {
      prompt: 'n',
      height: 16,
      width: 16,
      num_inference_steps: 10,
    });
    expect(res.status).toBe(200);
    const requestId = res.headers.get('x-request-id');
    const steps = logger.records.filter((r) => r.msg === 'generation step' && r.requestId === requestId);
    expect(steps.map((r) => r.step)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(new Set(steps.map((r) => r.totalSteps))).toEqual(new Set([10]));
  });

  it('is ready only after a warm-up generation ran, and reports it', () => {
    const ready = logger.records.find((r) => r.msg === 'diffusion model ready');
    expect(String(ready?.warmUp)).toMatch(/^2 steps at 8×8 in /);
  });

  it('fails at start when the model loads but cannot run, instead of claiming readiness', async () => {
    const dir = tinyDir('sd1');
    const configPath = join(dir, 'scheduler', 'scheduler_config.json');
    // An unknown beta schedule: every weight loads, every generation fails.
    const config = JSON.parse(readFileSync(configPath, 'utf8')) as Record<string, unknown>;
    writeFileSync(configPath, JSON.stringify({ ...config, beta_schedule: 'no-such-schedule' }));
    const broken = createDiffusionService({ modelDir: dir, backend: 'wasm', logger: new MemoryLogger() });
    await expect(
      serve(broken.service, { port: 0, host: '127.0.0.1', logger: false, handleSignals: false }),
    ).rejects.toThrow(/Could not start the diffusion pipeline.*beta_schedule/);
  });

  it.each([
    ['an SD UNet', 'sd1', 'unet/diffusion_pytorch_model.safetensors'],
    ["SDXL's second text encoder", 'sdxl', 'text_encoder_2/model.safetensors'],
  ] as const)(
    'refuses at start a model whose float32 weights exceed the wasm heap (%s), naming what to do',
    async (_what, flavour, rel) => {
      const dir = tinyDir(flavour);
      // 4.4 GB of weights declared in a sparse file: the size check reads headers only, so no disk is used.
      const path = join(dir, rel);
      rmSync(path);
      const header = JSON.stringify({
        huge: { dtype: 'F32', shape: [1_100_000_000], data_offsets: [0, 4_400_000_000] },
      });
      const padded = header.padEnd(Math.ceil(header.length / 8) * 8, ' ');
      const fd = openSync(path, 'w');
      const length = Buffer.alloc(8);
      length.writeBigUInt64LE(BigInt(padded.length));
      writeSync(fd, length);
      writeSync(fd, Buffer.from(padded));
      writeSync(fd, Buffer.alloc(1), 0, 1, 8 + padded.length + 4_400_000_000 - 1);
      closeSync(fd);
      const big = createDiffusionService({ modelDir: dir, backend: 'wasm', logger: new MemoryLogger() });
      const failure = await serve(big.service, {
        port: 0,
        host: '127.0.0.1',
        logger: false,
        handleSignals: false,
      }).catch((e: Error) => e);
      expect(failure).toBeInstanceOf(ModelTooLargeError);
      expect((failure as Error).message).toMatch(/4\.\d+ GB as float32.*wasm.*--backend tensorflow/);
      rmSync(path);
    },
  );
});
