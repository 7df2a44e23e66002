import { MemoryLogger } from '@tiffin/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GenerationCancelled } from '../../src/pipeline/cancel.js';
import { readModelDefaults } from '../../src/pipeline/model-defaults.js';
import { compatRequest } from '../../src/service/compat/generator.js';
import type { GenerationEvent } from '../../src/service/generation-events.js';
import { QueueFullError } from '../../src/service/generation-queue.js';
import { Generator } from '../../src/service/generator.js';
import { defaultImageSize, pipelineFamily } from '../../src/service/model-config.js';
import { DEFAULT_GENERATION_LIMITS, defaultedValues } from '../../src/service/request-schemas.js';
import { tinyDir } from '../helpers/tiny.js';

/**
 * The Generator alone, on the tiny random pipeline in its worker thread (no server): one event stream that every
 * subscriber sees, the queue's order by origin, and a generation stopped by its signal or its handle.
 */
const modelDir = tinyDir('sd1');
let generator: Generator;

const small = { prompt: 'a tiny cat', height: 16, width: 16, num_inference_steps: 2, seed: 7 };
/** Long enough to be running while the others are queued; every test that starts one cancels it. */
const long = { ...small, height: 32, width: 32, num_inference_steps: 150 };
const request = (body: Record<string, unknown>) => compatRequest(generator, body);

/** The events of `jobId` until `done` says enough. */
function eventsUntil(jobId: string, done: (e: GenerationEvent) => boolean): Promise<GenerationEvent[]> {
  const seen: GenerationEvent[] = [];
  return new Promise((resolve) => {
    const stop = generator.events.subscribe((e) => {
      seen.push(e);
      if (done(e)) {
        stop();
        resolve(seen);
      }
    }, jobId);
  });
}

beforeAll(async () => {
  const limits = { ...DEFAULT_GENERATION_LIMITS, maxSize: 64 };
  const family = pipelineFamily(modelDir);
  const defaults = readModelDefaults(modelDir);
  generator = new Generator({
    kinds: ['text2img'],
    context: {
      limits,
      defaultSize: defaultImageSize(modelDir),
      family,
      defaults,
      defaulted: defaultedValues(limits, family, defaults),
    },
    modelName: 'tiny',
    worker: { modelDir, backend: 'wasm', loraCacheSize: 1 },
    loraDirs: [],
    maxQueue: 1,
  });
  await generator.open(new MemoryLogger());
}, 120_000);

afterAll(async () => {
  await generator?.close();
});

describe('Generator', () => {
  it('publishes one stream of events that a subscriber to every generation and one to a job both see', async () => {
    const every: GenerationEvent[] = [];
    const stopEvery = generator.events.subscribe((e) => every.push(e));
    const handle = generator.start({ request: await request(small), id: 'my-request', preview: true });
    const own = eventsUntil(handle.jobId, (e) => e.type === 'done');
    const result = await handle.result;
    stopEvery();
    const mine = await own;
    expect(mine.map((e) => e.type)).toEqual(['queued', 'started', 'step', 'step', 'done']);
    // The same event objects, in the same order, for both subscribers.
    expect(every.filter((e) => e.jobId === handle.jobId)).toEqual(mine);
    expect(every.filter((e) => e.jobId === handle.jobId).every((e, i) => e === mine[i])).toBe(true);
    expect(mine[0]).toMatchObject({ id: 'my-request', origin: 'request', position: 0 });
    const steps = mine.filter((e) => e.type === 'step');
    expect(steps.map((e) => [e.step, e.totalSteps])).toEqual([
      [1, 2],
      [2, 2],
    ]);
    // Each step's preview: pixels for one subscriber, a data URL made once for any other.
    for (const step of steps) {
      expect(step.preview?.image.width).toBeGreaterThan(0);
      expect(step.preview?.dataUrl).toMatch(/^data:image\/bmp;base64,/);
    }
    expect(result.seeds).toEqual([7]);
    expect(result.images[0].shape).toEqual([16, 16, 3]);
    expect(mine.at(-1)).toMatchObject({ type: 'done', seeds: [7] });
  });

  it('queues a claimed task ahead of waiting requests and past the bound; a request past it is refused', async () => {
    const started: string[] = [];
    const stop = generator.events.subscribe((e) => {
      if (e.type === 'started') started.push(e.id);
    });
    const running = generator.start({ request: await request(long), id: 'running' });
    await eventsUntil(running.jobId, (e) => e.type === 'step');
    const waiting = generator.start({ request: await request(small), id: 'waiting request' });
    const queued = await eventsUntil(waiting.jobId, (e) => e.type === 'queued');
    expect(queued[0]).toMatchObject({ type: 'queued', position: 1 });
    // The queue holds one request: the next is refused at once, a task is not.
    const refused = generator.start({ request: await request(small), id: 'refused' });
    await expect(refused.result).rejects.toBeInstanceOf(QueueFullError);
    const task = generator.start({ request: await request(small), id: 'task', origin: 'task' });
    const taskQueued = await eventsUntil(task.jobId, (e) => e.type === 'queued');
    // Only the running generation is ahead of the task: the request queued before it waits behind it.
    expect(taskQueued[0]).toMatchObject({ origin: 'task', position: 1 });
    expect(generator.queue.size).toEqual({ running: 1, waiting: 2 });
    running.cancel();
    await expect(running.result).rejects.toBeInstanceOf(GenerationCancelled);
    await Promise.all([task.result, waiting.result]);
    stop();
    expect(started).toEqual(['running', 'task', 'waiting request']);
  });

  it('stops a running generation at its next step when its signal aborts, and drops a waiting one unrun', async () => {
    const controller = new AbortController();
    const running = generator.start({ request: await request(long), signal: controller.signal });
    const runningEvents = eventsUntil(running.jobId, (e) => e.type === 'cancelled');
    await eventsUntil(running.jobId, (e) => e.type === 'step');
    const waitingController = new AbortController();
    const waiting = generator.start({ request: await request(small), signal: waitingController.signal });
    const waitingEvents = eventsUntil(waiting.jobId, (e) => e.type === 'cancelled');
    await eventsUntil(waiting.jobId, (e) => e.type === 'queued');
    waitingController.abort(new Error('client gone'));
    await expect(waiting.result).rejects.toBeInstanceOf(GenerationCancelled);
    expect((await waitingEvents).map((e) => e.type)).toEqual(['queued', 'cancelled']);
    controller.abort(new Error('deadline'));
    await expect(running.result).rejects.toBeInstanceOf(GenerationCancelled);
    const seen = await runningEvents;
    const last = seen.at(-1);
    expect(last?.type === 'cancelled' && (last.reason as Error).message).toBe('deadline');
    expect(seen.filter((e) => e.type === 'step').length).toBeLessThan(150);
    expect(generator.queue.size).toEqual({ running: 0, waiting: 0 });
  });
});
