import { afterEach, describe, expect, it } from 'vitest';
import { NDArray } from '../../src/index.js';
import { RunnerPool } from '../../src/models/runner-pool.js';

const WORKER = new URL('./fixtures/doubling-runner.ts', import.meta.url);
let pool: RunnerPool | undefined;
afterEach(async () => {
  await pool?.close();
  pool = undefined;
});

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

  it('a thread that dies fails its call; the other instances go on', async () => {
    pool = await RunnerPool.start({ model: 'double', workerModule: WORKER, init: {}, instances: 2 });
    await expect(pool.run({ crash: x(1) })).rejects.toMatchObject({ code: 'MODEL_RUN_FAILED' });
    expect(pool.instances).toBe(1);
    expect([...((await pool.run({ x: x(4) })).y!.data as Float32Array)]).toEqual([8]);
  });

  it('a model that cannot load fails start() and leaves no thread behind', async () => {
    await expect(
      RunnerPool.start({ model: 'double', workerModule: WORKER, init: { refuse: true }, instances: 2 }),
    ).rejects.toThrow(/cannot be loaded/);
  });
});
