import { describe, expect, it } from 'vitest';
import { GenerationCancelled } from '../../src/pipeline/cancel.js';
import { GenerationQueue, QueueFullError } from '../../src/service/generation-queue.js';
import { StepClock } from '../../src/service/step-clock.js';

function deferred<T>() {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

describe('GenerationQueue', () => {
  it('runs one job at a time in order and refuses past the bound', async () => {
    const q = new GenerationQueue(1);
    const order: string[] = [];
    const first = deferred<void>();
    const a = q.submit(async () => {
      order.push('a');
      await first.promise;
      return 'A';
    });
    const b = q.submit(async () => {
      order.push('b');
      return 'B';
    });
    const c = q.submit(async () => 'C');
    await expect(c).rejects.toBeInstanceOf(QueueFullError);
    await expect(c).rejects.toHaveProperty('retryAfterSeconds');
    expect(q.size).toEqual({ running: 1, waiting: 1 });
    first.resolve();
    expect(await a).toBe('A');
    expect(await b).toBe('B');
    expect(order).toEqual(['a', 'b']);
  });

  it('lets a task wait past the bound (the task store bounds tasks), ahead of the requests waiting', async () => {
    const q = new GenerationQueue(1);
    const first = deferred<void>();
    const order: string[] = [];
    const a = q.submit(async () => {
      await first.promise;
      order.push('a');
    });
    const b = q.submit(async () => {
      order.push('b');
    });
    await expect(q.submit(async () => {})).rejects.toBeInstanceOf(QueueFullError);
    expect(q.ahead('task')).toBe(1);
    const job = q.submit(async () => order.push('job'), { origin: 'task' });
    const later = q.submit(async () => order.push('job 2'), { origin: 'task' });
    expect(q.size).toEqual({ running: 1, waiting: 3 });
    expect(q.ahead('request')).toBe(4);
    first.resolve();
    await Promise.all([a, b, job, later]);
    // A task waited its turn in the task store already: it goes before the requests, tasks in their order.
    expect(order).toEqual(['a', 'job', 'job 2', 'b']);
  });

  it('drops a waiting job whose client disconnected, without running it', async () => {
    const q = new GenerationQueue(4);
    const gate = deferred<void>();
    const running = q.submit(() => gate.promise);
    const controller = new AbortController();
    let ran = false;
    const waiting = q.submit(
      async () => {
        ran = true;
      },
      { signal: controller.signal },
    );
    controller.abort();
    await expect(waiting).rejects.toBeInstanceOf(GenerationCancelled);
    expect(q.size.waiting).toBe(0);
    gate.resolve();
    await running;
    expect(ran).toBe(false);
  });

  it('a failing job does not stall the queue', async () => {
    const q = new GenerationQueue(2);
    const a = q.submit(async () => {
      throw new Error('boom');
    });
    const b = q.submit(async () => 'ok');
    await expect(a).rejects.toThrow('boom');
    expect(await b).toBe('ok');
  });

  it('computes Retry-After from the measured step time and the work ahead, not a constant', async () => {
    const clock = new StepClock();
    // Measured: 2 s per step of 128 units (e.g. 64×64 px with guidance), no overhead yet.
    clock.recordStep(128, 2);
    const q = new GenerationQueue(1, 1, clock);
    const gate = deferred<void>();
    const cost = { steps: 10, unitsPerStep: 128 };
    const running = q.submit(
      async (job) => {
        job.stepDone(1);
        job.stepDone(4);
        await gate.promise;
      },
      { cost },
    );
    const waiting = q.submit(async () => {}, { cost: { steps: 5, unitsPerStep: 128 } });
    const refused = (await q.submit(async () => {}, { cost }).catch((e: unknown) => e)) as QueueFullError;
    expect(refused).toBeInstanceOf(QueueFullError);
    // Running: 6 steps left; waiting: 5 steps; 11 steps × the measured seconds per step.
    const perStep = clock.estimate(128).step;
    expect(refused.retryAfterSeconds).toBe(Math.ceil(11 * perStep));
    expect(refused.headers['retry-after']).toBe(String(refused.retryAfterSeconds));
    // A larger job waiting ahead is estimated by scaling the nearest measured size.
    expect(clock.estimate(512).step).toBeCloseTo(perStep * 4);
    gate.resolve();
    await Promise.all([running, waiting]);
  });
});
