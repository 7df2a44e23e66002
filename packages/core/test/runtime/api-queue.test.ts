import { describe, expect, it } from 'vitest';
import { ApiQueue } from '../../src/runtime/admission/api-queue.js';
import type { Invocation } from '../../src/runtime/invocation.js';
import { LazyAbort } from '../../src/runtime/lazy-abort.js';

/** A call as the runtime tracks it, with the urgency and client its transport read. */
function invocation(urgency?: number, client?: string): Invocation {
  return {
    requestId: 'r',
    api: undefined,
    abort: new LazyAbort(),
    onClose: [],
    startedAt: performance.now(),
    timedOut: false,
    urgency,
    client,
  };
}

const queue = (size: number) =>
  new ApiQueue('q', { concurrency: 1, size, perClient: size, retryAfter: 1, remainingMs: () => 60_000 });

describe('ApiQueue', () => {
  it('drops the calls that left while they waited, however many, and serves the one still waiting', async () => {
    const q = queue(1000);
    const first = q.enter(invocation()) as () => void;
    const kept = q.enter(invocation(7)) as Promise<() => void>;
    const leaving = Array.from({ length: 300 }, () => invocation(7));
    const waits = leaving.map((call) => (q.enter(call) as Promise<() => void>).catch((err: unknown) => err));
    expect(q.depth).toBe(301);
    for (const call of leaving) call.abort.abort(new Error('deadline'));
    expect((await Promise.all(waits)).every((e) => e instanceof Error)).toBe(true);
    expect(q.depth).toBe(1);
    first();
    const release = await kept;
    expect(q.depth).toBe(0);
    release();
    // Free again: the next call takes the slot at once.
    expect(typeof q.enter(invocation())).toBe('function');
  });

  it('hands a freed slot to the most urgent waiting call, then the oldest', async () => {
    const q = queue(10);
    const order: string[] = [];
    const first = q.enter(invocation()) as () => void;
    const wait = (name: string, u?: number) =>
      (q.enter(invocation(u)) as Promise<() => void>).then((release) => {
        order.push(name);
        release();
      });
    const all = [wait('a', 5), wait('b'), wait('c', 1), wait('d', 5)];
    first();
    await Promise.all(all);
    expect(order).toEqual(['c', 'b', 'a', 'd']);
  });
});
