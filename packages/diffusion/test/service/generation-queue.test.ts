import { describe, expect, it } from 'vitest';
import { GenerationQueue, JobAbortedError, QueueFullError } from '../../src/service/generation-queue.js';

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

  it('drops a waiting job whose client disconnected, without running it', async () => {
    const q = new GenerationQueue(4);
    const gate = deferred<void>();
    const running = q.submit(() => gate.promise);
    const controller = new AbortController();
    let ran = false;
    const waiting = q.submit(async () => {
      ran = true;
    }, controller.signal);
    controller.abort();
    await expect(waiting).rejects.toBeInstanceOf(JobAbortedError);
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
});
