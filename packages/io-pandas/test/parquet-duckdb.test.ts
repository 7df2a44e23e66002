import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { readResponseBody } from '@tiffin/core/internal';
import { describe, expect, it } from 'vitest';
import { loadDanfo, PandasDataFrame } from '../src/index.js';
import { bodyJson, jsonRequest } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'io-pandas-duck-'));
const db = await (await DuckDBInstance.create(':memory:')).connect();

const SELECT = `SELECT i::BIGINT AS id, i::INTEGER AS small, (i * 1.5)::DOUBLE AS x,
  CASE WHEN i % 3 = 0 THEN NULL ELSE i END::BIGINT AS maybe,
  CASE WHEN i % 2 = 0 THEN 'even' ELSE 'odd' END AS parity,
  TIMESTAMP '2024-01-01 00:00:00' + to_seconds(i) AS ts,
  i % 2 = 0 AS flag
  FROM range(0, 1000) t(i)`;

describe('Parquet written by DuckDB', () => {
  for (const codec of ['snappy', 'gzip', 'zstd', 'uncompressed']) {
    it(`reads a ${codec} file with dictionary strings, nulls, int64 and timestamps`, async () => {
      const path = join(dir, `in-${codec}.parquet`);
      await db.run(`COPY (${SELECT}) TO '${path}' (FORMAT parquet, COMPRESSION ${codec})`);
      const df = await new PandasDataFrame({ orient: 'split' }).fromHttpRequest(
        jsonRequest(readFileSync(path), 'application/vnd.apache.parquet'),
      );
      expect(df.shape).toEqual([1000, 7]);
      expect(df.columns).toEqual(['id', 'small', 'x', 'maybe', 'parity', 'ts', 'flag']);
      const values = df.values as unknown[][];
      const row4 = values[4]!;
      expect(row4.slice(0, 5)).toEqual([4, 4, 6, 4, 'even']);
      expect((row4[5] as Date).toISOString()).toBe('2024-01-01T00:00:04.000Z');
      expect(row4[6]).toBe(true);
      // Nulls in an integer column → float with NaN, as pandas reads it; JSON writes null.
      expect(Number.isNaN(values[3]![3])).toBe(true);
      expect(df.dtypes).toEqual(['int32', 'int32', 'float32', 'float32', 'string', 'datetime', 'boolean']);
      const out = (await bodyJson(
        await new PandasDataFrame({ orient: 'records' }).toHttpResponse(df, null),
      )) as Array<Record<string, unknown>>;
      expect(out[3]).toEqual({
        id: 3,
        small: 3,
        x: 4.5,
        maybe: null,
        parity: 'odd',
        ts: Date.UTC(2024, 0, 1, 0, 0, 3),
        flag: false,
      });
    });
  }
});

describe('Parquet written by us, read by DuckDB', () => {
  it('keeps types, nulls and a non-default index', async () => {
    const dfd = await loadDanfo();
    const df = new dfd.DataFrame(
      [
        [1, 0.5, 'a', true, new Date(Date.UTC(2020, 0, 1))],
        [2, Number.NaN, 'b', false, new Date(Date.UTC(2021, 5, 2))],
      ],
      {
        columns: ['n', 'f', 's', 'b', 't'],
        index: ['r1', 'r2'],
        dtypes: ['int32', 'float32', 'string', 'boolean', 'datetime'],
      },
    );
    const bytes = await readResponseBody(
      await new PandasDataFrame({ default_format: 'parquet' }).toHttpResponse(df, null),
    );
    const path = join(dir, 'out.parquet');
    writeFileSync(path, bytes);
    const reader = await db.runAndReadAll(
      `SELECT n, f, s, b, epoch_ms(t) AS t, __index_level_0__ AS idx, typeof(n) AS tn, typeof(f) AS tf FROM read_parquet('${path}') ORDER BY n`,
    );
    expect(reader.getRowObjectsJson()).toEqual([
      {
        n: '1',
        f: 0.5,
        s: 'a',
        b: true,
        t: String(Date.UTC(2020, 0, 1)),
        idx: 'r1',
        tn: 'BIGINT',
        tf: 'DOUBLE',
      },
      {
        n: '2',
        f: null,
        s: 'b',
        b: false,
        t: String(Date.UTC(2021, 5, 2)),
        idx: 'r2',
        tn: 'BIGINT',
        tf: 'DOUBLE',
      },
    ]);
    // And back: the stored index comes back as the index.
    const back = await new PandasDataFrame().fromHttpRequest(
      jsonRequest(Buffer.from(bytes), 'application/vnd.apache.parquet'),
    );
    expect(back.index).toEqual(['r1', 'r2']);
    expect(back.columns).toEqual(['n', 'f', 's', 'b', 't']);
  });
});
