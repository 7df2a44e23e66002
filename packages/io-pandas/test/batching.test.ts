import { BadInput, Service, serve } from '@tiffin/core';
import { describe, expect, it } from 'vitest';
import { type DataFrame, PandasDataFrame, PandasSeries, type Series } from '../src/index.js';

function latch() {
  let open = () => {};
  const wait = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { wait, open };
}

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 2));
}

describe('batching of pandas descriptors', () => {
  it('PandasDataFrame: rows of queued requests are concatenated, and each caller gets its own rows back', async () => {
    const gate = latch();
    const batches: number[] = [];
    const svc = new Service('frames');
    svc.api(
      {
        input: new PandasDataFrame({ orient: 'records' }),
        output: new PandasDataFrame({ orient: 'records' }),
        batchable: true,
        max_batch_size: 8,
        max_latency_ms: 1000,
      },
      async function scale(frame: DataFrame) {
        batches.push(frame.shape[0]!);
        if (batches.length === 1) await gate.wait;
        return frame.mul(10) as DataFrame;
      },
    );
    const handle = await serve(svc, { port: 0, logger: false, handleSignals: false });
    const post = (rows: unknown) =>
      fetch(`${handle.url}/scale`, {
        method: 'POST',
        body: JSON.stringify(rows),
        headers: { 'content-type': 'application/json' },
      }).then(async (r) => ({ status: r.status, body: await r.json() }));
    try {
      const first = post([{ a: 0, b: 0 }]);
      await until(() => batches.length === 1);
      const two = post([
        { a: 1, b: 2 },
        { a: 3, b: 4 },
      ]);
      const one = post([{ a: 5, b: 6 }]);
      await until(() => handle.app.runtime.batcher('scale')!.depth === 3);
      gate.open();
      expect((await first).body).toEqual([{ a: 0, b: 0 }]);
      expect((await two).body).toEqual([
        { a: 10, b: 20 },
        { a: 30, b: 40 },
      ]);
      expect((await one).body).toEqual([{ a: 50, b: 60 }]);
      expect(batches).toEqual([1, 3]);
      const empty = await post([]);
      expect(empty.status).toBe(400);
    } finally {
      await handle.close();
    }
  });

  it('PandasSeries: hooks merge and split in order, reindexed from 0', async () => {
    const descriptor = new PandasSeries({ dtype: 'float64' });
    const { BufferedHttpRequest } = await import('@tiffin/core/internal');
    const read = (body: string) =>
      descriptor.fromHttpRequest(
        new BufferedHttpRequest({ headers: { 'content-type': 'application/json' }, body }),
      );
    const parts = [await read('[1, 2]'), await read('[3]')];
    const hooks = descriptor.batching;
    expect(parts.map((p) => hooks.rows(p, 0))).toEqual([2, 1]);
    const merged = hooks.merge(parts, 0) as Series;
    expect(merged.values).toEqual([1, 2, 3]);
    const split = hooks.split(merged, [2, 1], 0);
    expect(split.map((s) => s.values)).toEqual([[1, 2], [3]]);
    expect(split[1]!.index).toEqual([0]);
    expect(() => hooks.rows(parts[0]!, 1)).toThrow(BadInput);
  });
});
