import { PayloadTooLarge } from '@tiffin/core';
import { BufferedHttpRequest, resolveLimits } from '@tiffin/core/internal';
import { describe, expect, it } from 'vitest';
import { frameView, seriesView } from '../src/danfo/convert.js';
import { frameToParquet } from '../src/formats/parquet.js';
import { PandasDataFrame, PandasSeries } from '../src/index.js';
import type { FrameView } from '../src/table/view.js';

/*
 * A large table body is decoded in a worker thread (Parquet always, JSON and CSV from 16 KiB) and
 * its DataFrame built in slices. What the API gets must be what the on-loop decoder gives.
 */

const request = (body: Buffer | string, contentType: string, limits = resolveLimits()) =>
  new BufferedHttpRequest({ headers: { 'content-type': contentType }, body, limits });

/** A table of every kind of column, `n` rows: numbers with NaN, big integers, text, booleans, dates. */
function mixedView(n: number): FrameView {
  const rows = Array.from({ length: n }, (_, r) => [
    r % 10 === 0 ? Number.NaN : r / 4,
    r,
    `name ${r} — ünïcode`,
    r % 3 === 0,
    new Date(Date.UTC(2024, 0, 1 + (r % 28))),
  ]);
  return {
    columns: ['score', 'id', 'name', 'flag', 'when'],
    index: Array.from({ length: n }, (_, i) => i + 100),
    dtypes: ['float64', 'int64', 'object', 'bool', 'datetime64[ns]'],
    rows,
  };
}

describe('large table bodies are decoded off the event loop', () => {
  it('Parquet, CSV and JSON give the same DataFrame off the loop as the on-loop decoder', async () => {
    const d = new PandasDataFrame({ orient: 'records' });
    const view = mixedView(3000);
    const parquet = Buffer.from(frameToParquet(view));
    const records = view.rows.map((row) => Object.fromEntries(view.columns.map((c, i) => [c, row[i]])));
    const json = Buffer.from(JSON.stringify(records));
    const csv = Buffer.from(
      `score,id,name,flag\n${view.rows.map((r) => [r[0], r[1], JSON.stringify(r[2]), r[3]].join(',')).join('\n')}`,
    );
    expect(json.length).toBeGreaterThan(16 * 1024);
    expect(csv.length).toBeGreaterThan(16 * 1024);
    for (const [body, type, format] of [
      [parquet, 'application/vnd.apache.parquet', 'parquet'],
      [json, 'application/json', 'json'],
      [csv, 'text/csv', 'csv'],
    ] as const) {
      const offLoop = frameView(await d.fromHttpRequest(request(body, type)));
      const onLoop = await d.decode(body, format);
      expect(offLoop.columns, format).toEqual(onLoop.columns);
      expect(offLoop.dtypes, format).toEqual(onLoop.dtypes);
      const columns = offLoop.columns.map((_, c) => offLoop.rows.map((row) => row[c]));
      expect(columns, format).toEqual(onLoop.data);
    }
  }, 60_000);

  it('a Series body from 16 KiB is decoded there too: the same Series, and its errors are 400s', async () => {
    const values = Array.from({ length: 5000 }, (_, i) => (i % 7 === 0 ? null : i / 8));
    const body = JSON.stringify({ name: 'x', index: values.map((_, i) => `r${i}`), data: values });
    expect(body.length).toBeGreaterThan(16 * 1024);
    const series = seriesView(
      await new PandasSeries({ orient: 'split' }).fromHttpRequest(request(body, 'application/json')),
    );
    const small = seriesView(
      await new PandasSeries({ orient: 'split' }).fromHttpRequest(
        request(
          JSON.stringify({ name: 'x', index: ['r0', 'r1'], data: values.slice(0, 2) }),
          'application/json',
        ),
      ),
    );
    expect(series).toMatchObject({ name: 'x', dtype: small.dtype });
    expect(series.index.slice(0, 2)).toEqual(small.index);
    expect(series.values.slice(0, 2)).toEqual(small.values);
    expect(series.values[7]).toBeNaN();
    expect(series.values[4999]).toBe(4999 / 8);
    const strict = new PandasSeries({ dtype: 'int64', enforce_dtype: true });
    const err = await strict
      .fromHttpRequest(
        request(JSON.stringify([...Array.from({ length: 3999 }, (_, i) => i), 'seven']), 'application/json'),
      )
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ httpStatus: 400, code: 'BAD_INPUT' });
    expect((err as Error).message).toMatch(
      /^PandasSeries: row 3999 \(position 3999\): cannot convert "seven" to int64/,
    );
  }, 60_000);

  it('the DataFrame holds its columns as danfo would (column access, arithmetic, a copy)', async () => {
    const d = new PandasDataFrame({ orient: 'records' });
    const df = await d.fromHttpRequest(
      request(Buffer.from(frameToParquet(mixedView(2000))), 'application/vnd.apache.parquet'),
    );
    expect(df.shape).toEqual([2000, 5]);
    expect(df.index[0]).toBe(100);
    expect(df.column('id').values.slice(0, 3)).toEqual([0, 1, 2]);
    expect(df.column('name').values[1]).toBe('name 1 — ünïcode');
    expect(df.column('id').add(1).values.slice(0, 2)).toEqual([1, 2]);
    const copy = df.copy();
    copy.addColumn('double', df.column('id').mul(2), { inplace: true });
    expect(copy.column('double').values[3]).toBe(6);
    expect(df.columns).toHaveLength(5);
  }, 60_000);

  it("errors from the thread are the client's, as on the loop: 400 and 413 with their codes", async () => {
    const d = new PandasDataFrame({ orient: 'records' });
    const notParquet = await d
      .fromHttpRequest(request(Buffer.from('PAR1 not really'), 'application/vnd.apache.parquet'))
      .catch((e: unknown) => e);
    expect(notParquet).toMatchObject({ httpStatus: 400, code: 'BAD_INPUT' });
    expect((notParquet as Error).message).toMatch(
      /^PandasDataFrame: request body is not a readable Parquet file/,
    );
    const big = `a,b\n${'1,2\n'.repeat(5000)}`;
    const tooMany = await d
      .fromHttpRequest(request(big, 'text/csv', resolveLimits({ maxElements: 1000 })))
      .catch((e: unknown) => e);
    expect(tooMany).toBeInstanceOf(PayloadTooLarge);
    expect(tooMany).toMatchObject({ httpStatus: 413, code: 'PAYLOAD_TOO_LARGE' });
  }, 60_000);

  it('the event loop keeps turning while a 1 M-cell Parquet body is decoded and becomes a DataFrame', async () => {
    const d = new PandasDataFrame({ orient: 'records' });
    const n = 250_000;
    const view: FrameView = {
      columns: ['a', 'b', 'c', 'd'],
      index: Array.from({ length: n }, (_, i) => i),
      dtypes: ['float64', 'float64', 'int64', 'int64'],
      rows: Array.from({ length: n }, (_, r) => [r / 2, r * 1.5, r, r % 7]),
    };
    const body = Buffer.from(frameToParquet(view));
    await d.fromHttpRequest(request(body, 'application/vnd.apache.parquet')); // the thread starts
    let turns = 0;
    const ticker = setInterval(() => turns++, 1);
    const started = performance.now();
    const df = await d.fromHttpRequest(request(body, 'application/vnd.apache.parquet'));
    const ms = performance.now() - started;
    clearInterval(ticker);
    expect(df.shape).toEqual([n, 4]);
    // On the loop, the whole decode is one task: the ticker gets no turn until it ends. Here it gets turns
    // all along (slices of 65,536 cells): at least one for every 64 K cells.
    console.info(`1 M cells: ${ms.toFixed(0)} ms, ${turns} turns of the event loop meanwhile`);
    expect(turns).toBeGreaterThanOrEqual((4 * n) / 65_536);
  }, 60_000);
});
