import { BadInput } from '@tiffin/core';
import { BufferedHttpRequest, readResponseBody, resolveLimits } from '@tiffin/core/internal';
import { describe, expect, it } from 'vitest';
import { frameToParquet } from '../src/formats/parquet.js';
import { PandasDataFrame, PandasSeries } from '../src/index.js';

const req = (body: string, limits = resolveLimits()) =>
  new BufferedHttpRequest({ headers: { 'content-type': 'application/json' }, body, limits });
const deep = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`;

async function rejection(p: Promise<unknown>): Promise<BadInput> {
  const err = await p.then(
    () => {
      throw new Error('expected a rejection');
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(BadInput);
  return err as BadInput;
}

describe('deep JSON', () => {
  it('answers 400 naming the depth limit, never a stack overflow', async () => {
    for (const body of [deep(10_000), `[1, ${deep(10_000)}]`, `[{"a": ${deep(20_000)}}]`]) {
      for (const d of [new PandasSeries(), new PandasDataFrame()]) {
        const err = await rejection(d.fromHttpRequest(req(body)));
        expect(err.message).toMatch(/deeper than 512 levels/);
        expect(err.message).not.toMatch(/call stack/);
      }
    }
  });

  it('follows the server-configured depth', async () => {
    const err = await rejection(
      new PandasSeries().fromHttpRequest(req(`[${deep(20)}]`, resolveLimits({ maxDepth: 8 }))),
    );
    expect(err.message).toMatch(/deeper than 8 levels/);
  });
});

describe('cells Parquet cannot represent', () => {
  it('answers 400 naming the column for integers past INT64', async () => {
    const out = new PandasDataFrame({ default_format: 'parquet' });
    for (const value of ['1e30', '9223372036854775808', '18446744073709551616']) {
      const df = await new PandasDataFrame().fromHttpRequest(req(`[{"ok": 1, "big": ${value}}]`));
      const err = await rejection(out.toHttpResponse(df, null));
      expect(err.message).toMatch(/Column 'big' row 0 .*INT64/);
    }
  });

  it('writes nested cells as JSON text', async () => {
    const df = await new PandasDataFrame().fromHttpRequest(req('[{"a": [1, 2]}, {"a": {"b": [[1]]}}]'));
    const res = await new PandasDataFrame({ default_format: 'parquet' }).toHttpResponse(df, null);
    expect(res.status).toBe(200);
  });
});

describe('a column that `dtype` names but the body lacks (enforce_dtype)', () => {
  const declared = () =>
    new PandasDataFrame({ dtype: { price: 'float64', name: 'str' }, enforce_dtype: true });
  const asRequest = (body: string | Buffer, contentType: string) =>
    new BufferedHttpRequest({ headers: { 'content-type': contentType }, body, limits: resolveLimits() });

  it('is a 400 naming the column, for JSON, CSV and Parquet bodies alike', async () => {
    const json = asRequest('[{"price": 1.5}]', 'application/json');
    const csv = asRequest('price\n1.5\n', 'text/csv');
    const frame = await new PandasDataFrame().fromHttpRequest(req('[{"price": 1.5}]'));
    const parquetBody = await new PandasDataFrame({ default_format: 'parquet' }).toHttpResponse(frame, null);
    const parquet = asRequest(await readResponseBody(parquetBody), 'application/vnd.apache.parquet');
    for (const request of [json, csv, parquet]) {
      const err = await rejection(declared().fromHttpRequest(request));
      expect(err.message).toBe(
        `PandasDataFrame: missing column "name" named in 'dtype' (enforce_dtype is on)`,
      );
    }
  });

  it('is accepted when every named column is there, and ignored without enforce_dtype', async () => {
    const body = '[{"price": 1.5, "name": "tea"}]';
    await expect(declared().fromHttpRequest(req(body))).resolves.toBeDefined();
    const loose = new PandasDataFrame({ dtype: { price: 'float64', name: 'str' } });
    await expect(loose.fromHttpRequest(req('[{"price": 1.5}]'))).resolves.toBeDefined();
  });
});

describe('tables that declare more cells than they carry', () => {
  const tooLarge = async (p: Promise<unknown>) => {
    const err = await p.then(
      () => {
        throw new Error('expected a rejection');
      },
      (e: unknown) => e,
    );
    expect(err).toMatchObject({ httpStatus: 413, code: 'PAYLOAD_TOO_LARGE' });
    expect((err as Error).message).toMatch(/over the limit of \d+ cells/);
  };
  // Each row names a new key (records), each column a new index label (columns), each row lacks the fields
  // (table schema): the missing cells are filled with null, so n keys make n × n cells from O(n) bytes.
  const n = 3000;
  const keys = Array.from({ length: n }, (_, i) => `k${i}`);
  const limits = resolveLimits({ maxElements: 1_000_000 });
  const frame = (orient: 'records' | 'columns' | 'index' | 'table') => new PandasDataFrame({ orient });

  it('refuses records whose keys differ row by row (413), before building n × n cells', async () => {
    await tooLarge(
      frame('records').fromHttpRequest(req(JSON.stringify(keys.map((k) => ({ [k]: 1 }))), limits)),
    );
  });

  it('refuses nested objects whose inner keys differ (columns and index orients)', async () => {
    const nested = JSON.stringify(Object.fromEntries(keys.map((k) => [k, { [k]: 1 }])));
    await tooLarge(frame('columns').fromHttpRequest(req(nested, limits)));
    await tooLarge(frame('index').fromHttpRequest(req(nested, limits)));
  });

  it('refuses a table schema of many fields over many empty rows', async () => {
    const body = JSON.stringify({
      schema: { fields: keys.map((name) => ({ name })) },
      data: keys.map(() => ({})),
    });
    await tooLarge(frame('table').fromHttpRequest(req(body, limits)));
  });

  it('refuses CSV past the cell limit, and takes a table just under it', async () => {
    const csv = (rows: number) =>
      new BufferedHttpRequest({
        headers: { 'content-type': 'text/csv' },
        body: `a,b\n${'1,2\n'.repeat(rows)}`,
        limits: resolveLimits({ maxElements: 1000 }),
      });
    await tooLarge(new PandasDataFrame().fromHttpRequest(csv(501)));
    const ok = await new PandasDataFrame().fromHttpRequest(csv(500));
    expect(ok.shape).toEqual([500, 2]);
  });

  it('refuses a Parquet file declaring more values per byte than maxValuesPerByte, and takes it when raised', async () => {
    // A real file of one constant column: dictionary + one RLE run, a few hundred bytes for 200,000 rows.
    const n = 200_000;
    const file = Buffer.from(
      frameToParquet({
        columns: ['k'],
        index: [...Array(n).keys()],
        dtypes: ['int64'],
        rows: Array(n).fill([7]),
      }),
    );
    expect(file.length).toBeLessThan(4096);
    const parquet = (limits = resolveLimits()) =>
      new BufferedHttpRequest({
        headers: { 'content-type': 'application/vnd.apache.parquet' },
        body: file,
        limits,
      });
    const err = await new PandasDataFrame().fromHttpRequest(parquet()).catch((e: unknown) => e);
    expect(err).toMatchObject({ httpStatus: 413, code: 'PAYLOAD_TOO_LARGE' });
    expect((err as Error).message).toMatch(
      /^PandasDataFrame: the Parquet file declares 200000 rows × 1 columns, over the limit of \d+ values \(16 values per byte of a \d+-byte file, limit maxValuesPerByte\)$/,
    );
    const ok = await new PandasDataFrame().fromHttpRequest(
      parquet(resolveLimits({ maxValuesPerByte: 1000 })),
    );
    expect(ok.shape).toEqual([n, 1]);
  });
});
