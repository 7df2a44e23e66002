import { afterEach, describe, expect, it } from 'vitest';
import { NDArray } from '../../src/index.js';
import { RunnerPool } from '../../src/models/runner-pool.js';

const WORKER = new URL('./fixtures/doubling-runner.ts', import.meta.url);
let pool: RunnerPool | undefined;
afterEach(async () => {
  await pool?.close();
  pool = undefined;
});

/** Counts event-loop turns, to tell whether answers arrived in one message or in many. */
function eventLoopTurns(): { now(): number; stop(): void } {
  let turn = 0;
  let on = true;
  const tick = () => {
    turn++;
    if (on) setImmediate(tick);
  };
  setImmediate(tick);
  return {
    now: () => turn,
    stop: () => {
      on = false;
    },
  };
}

const x = (...values: number[]) => new NDArray(Float32Array.from(values), [values.length], 'float32');

describe('RunnerPool: model calls in worker threads', () => {
  it('runs calls on its instances and queues the rest in order', async () => {
    pool = await RunnerPool.start({ model: 'double', workerModule: WORKER, init: {}, instances: 2 });
    expect(pool.instances).toBe(2);
    const calls = Array.from({ length: 9 }, (_, i) => pool!.run({ x: x(i, -i) }));
    expect(pool.busy).toBe(2);
    expect(pool.queued).toBe(7);
    const outs = await Promise.all(calls);
    outs.forEach((out, i) => {
      expect([...(out.y!.data as Float32Array)]).toEqual([2 * i, -2 * i]);
    });
    expect(pool.busy).toBe(0);
  });

  it('copies inputs by default and moves them with transferInputs', async () => {
    pool = await RunnerPool.start({ model: 'double', workerModule: WORKER, init: {}, instances: 1 });
    const kept = x(1, 2);
    await pool.run({ x: kept });
    expect(kept.data.length).toBe(2);
    await pool.close();
    pool = await RunnerPool.start({
      model: 'double',
      workerModule: WORKER,
      init: {},
      instances: 1,
      transferInputs: true,
    });
    const moved = x(1, 2);
    await pool.run({ x: moved });
    expect((moved.data as Float32Array).buffer.byteLength).toBe(0);
  });

  it("a runner's error is MODEL_RUN_FAILED: the runtime's message kept for the log, a safe one for the client", async () => {
    pool = await RunnerPool.start({ model: 'double', workerModule: WORKER, init: {}, instances: 1 });
    const err = (await pool.run({ fail: x(1) }).catch((e: unknown) => e)) as Error & {
      code: string;
      toBody(): { error: string };
    };
    expect(err.code).toBe('MODEL_RUN_FAILED');
    expect(err.message).toContain('kernel exploded');
    expect(err.toBody().error).not.toContain('/opt/secret');
    expect([...((await pool.run({ x: x(3) })).y!.data as Float32Array)]).toEqual([6]);
  });

  it('a thread that dies fails its call; the other instances go on, and a new thread takes its place', async () => {
    pool = await RunnerPool.start({ model: 'double', workerModule: WORKER, init: {}, instances: 2 });
    await expect(pool.run({ crash: x(1) })).rejects.toMatchObject({ code: 'MODEL_RUN_FAILED' });
    expect(pool.instances).toBe(2);
    expect([...((await pool.run({ x: x(4) })).y!.data as Float32Array)]).toEqual([8]);
  });

  it('a thread that frees up takes the waiting calls in one message and answers them together', async () => {
    pool = await RunnerPool.start({ model: 'double', workerModule: WORKER, init: {}, instances: 1 });
    const turns = eventLoopTurns();
    const answeredIn: number[] = [];
    const calls = Array.from({ length: 33 }, (_, i) =>
      pool!.run({ x: x(i) }).then((out) => {
        answeredIn.push(turns.now());
        return out;
      }),
    );
    expect(pool.busy).toBe(1);
    expect(pool.queued).toBe(32);
    const outs = await Promise.all(calls);
    turns.stop();
    outs.forEach((out, i) => {
      expect([...(out.y!.data as Float32Array)]).toEqual([2 * i]);
    });
    // One call alone, then bursts of 16: a few messages back, not 33 (a preempted thread may split a burst).
    expect(new Set(answeredIn).size).toBeLessThanOrEqual(8);
    expect(pool.queued).toBe(0);
    expect(pool.busy).toBe(0);
  });

  it('in a burst, a call that fails fails alone, and a call longer than the hold is answered before the next runs', async () => {
    pool = await RunnerPool.start({ model: 'double', workerModule: WORKER, init: {}, instances: 1 });
    const first = pool.run({ busy: x(30) });
    const burst = [pool.run({ busy: x(30) }), pool.run({ fail: x(1) }), pool.run({ x: x(5) })];
    const settled: string[] = [];
    const long = pool.run({ busy: x(30) }).then(() => settled.push('third long call'));
    burst[0]!.then(() => settled.push('second long call'));
    await first;
    const [a, b, c] = await Promise.allSettled(burst);
    expect(a.status).toBe('fulfilled');
    expect(b).toMatchObject({ status: 'rejected', reason: { code: 'MODEL_RUN_FAILED' } });
    expect(c.status === 'fulfilled' && [...(c.value.y!.data as Float32Array)]).toEqual([10]);
    await long;
    expect(settled).toEqual(['second long call', 'third long call']);
  });

  it('a thread that dies in the middle of a burst fails the calls it held; the next calls go to the others', async () => {
    pool = await RunnerPool.start({ model: 'double', workerModule: WORKER, init: {}, instances: 2 });
    const blockers = [pool.run({ busy: x(50) }), pool.run({ busy: x(50) })];
    const queued = [pool.run({ x: x(1) }), pool.run({ crash: x(1) }), pool.run({ x: x(2) })];
    await Promise.allSettled([...blockers, ...queued]);
    const results = await Promise.allSettled(queued);
    expect(results.some((r) => r.status === 'rejected')).toBe(true);
    expect(pool.instances).toBe(2);
    expect([...((await pool.run({ x: x(4) })).y!.data as Float32Array)]).toEqual([8]);
  });

  it('close lets the running call finish and refuses the waiting ones', async () => {
    pool = await RunnerPool.start({ model: 'double', workerModule: WORKER, init: {}, instances: 1 });
    const running = pool.run({ busy: x(20) });
    const waiting = pool.run({ x: x(3) }).catch((e: unknown) => e);
    const closing = pool.close();
    expect((await running).y).toBeDefined();
    expect(await waiting).toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
    await closing;
    pool = undefined;
  });

  it('a model that cannot load fails start() and leaves no thread behind', async () => {
    await expect(
      RunnerPool.start({ model: 'double', workerModule: WORKER, init: { refuse: true }, instances: 2 }),
    ).rejects.toThrow(/cannot be loaded/);
  });
});

describe('RunnerPool: calls whose caller is gone, and the queue bound', () => {
  const busy = (ms: number) => ({ busy: x(ms) });

  it('drops waiting calls whose signal fires, in the queue and in a thread’s burst, without running them', async () => {
    pool = await RunnerPool.start({ model: 'double', workerModule: WORKER, init: {}, instances: 1 });
    const first = pool.run(busy(200));
    const callers = Array.from({ length: 16 }, () => new AbortController());
    const dropped = callers.map((c) => pool!.run(busy(200), c.signal));
    expect(pool.queued).toBe(16);
    // Half leave while queued; the rest once the thread has taken them all in one burst.
    for (const c of callers.slice(0, 8)) c.abort(new Error('client left'));
    expect(pool.queued).toBe(8);
    const early = await Promise.allSettled(dropped.slice(0, 8));
    expect(early.every((r) => r.status === 'rejected' && (r.reason as Error).message === 'client left')).toBe(
      true,
    );
    await first;
    expect(pool.queued).toBe(0);
    for (const c of callers.slice(8)) c.abort(new Error('deadline'));
    await Promise.allSettled(dropped);
    // The call that started when the callers left may finish; none of the 15 others ran.
    const runs = (await pool.run({ runs: x(1) })).y!.data as Float32Array;
    expect(runs[0]).toBeLessThanOrEqual(2);
  });

  it('refuses a call at once with 503 RUNNER_QUEUE_FULL when maxQueued calls wait', async () => {
    pool = await RunnerPool.start({
      model: 'double',
      workerModule: WORKER,
      init: {},
      instances: 1,
      maxQueued: 2,
    });
    const held = [pool.run(busy(100)), pool.run({ x: x(1) }), pool.run({ x: x(2) })];
    await expect(pool.run({ x: x(3) })).rejects.toMatchObject({ code: 'RUNNER_QUEUE_FULL', httpStatus: 503 });
    await Promise.all(held);
    expect([...((await pool.run({ x: x(4) })).y!.data as Float32Array)]).toEqual([8]);
  });
});

describe('RunnerPool: dead threads are replaced, and a pool with none left says so', () => {
  it('replaces the only thread when it dies: waiting and later calls are answered by the new one', async () => {
    pool = await RunnerPool.start({ model: 'double', workerModule: WORKER, init: {}, instances: 1 });
    const crashed = pool.run({ crash: x(1) });
    const waiting = pool.run({ x: x(5) });
    await expect(crashed).rejects.toMatchObject({ code: 'MODEL_RUN_FAILED' });
    expect(pool.health()).toBeNull();
    expect([...((await waiting).y!.data as Float32Array)]).toEqual([10]);
    expect(pool.instances).toBe(1);
  });

  it('stops replacing a thread that keeps dying (5 a minute): every call then fails fast and health names why', async () => {
    pool = await RunnerPool.start({ model: 'double', workerModule: WORKER, init: {}, instances: 1 });
    for (let i = 0; i < 6; i++) await expect(pool.run({ crash: x(1) })).rejects.toBeDefined();
    expect(pool.health()).toMatch(/no runner left/);
    await expect(pool.run({ x: x(1) })).rejects.toMatchObject({ httpStatus: 503 });
  }, 120_000);
});
