import { BadInput, type HttpResponse, TiffinError } from '@tiffin/core';
import type { BufferedHttpRequest } from '@tiffin/core/internal';
import { describe, expect, it } from 'vitest';
import { type DataFrame, loadDanfo, PandasDataFrame, PandasSeries, type Series } from '../src/index.js';
import { bodyJson, bodyText, getHeader, jsonRequest } from './helpers.js';

/** The reference service's APIs, at descriptor level: input → handler → output. */
async function call<I, O>(
  input: { fromHttpRequest(r: BufferedHttpRequest): Promise<I> },
  output: { toHttpResponse(v: O, ctx: null): Promise<HttpResponse> },
  handler: (x: I) => Promise<O> | O,
  request: BufferedHttpRequest,
): Promise<HttpResponse> {
  try {
    return await output.toHttpResponse(await handler(await input.fromHttpRequest(request)), null);
  } catch (err) {
    if (err instanceof TiffinError) {
      return {
        status: err.httpStatus,
        headers: [['content-type', 'application/json']],
        body: Buffer.from(JSON.stringify(err.toBody())),
      };
    }
    throw err;
  }
}

const dfd = await loadDanfo();
const predictIn = new PandasDataFrame({ dtype: { col1: 'int64' }, orient: 'records' });
const predictOut = new PandasDataFrame();
const predict = (df: DataFrame) => new dfd.DataFrame({ col1: df.column('col1').mul(2).values });
const predictDataframe = (req: BufferedHttpRequest) => call(predictIn, predictOut, predict, req);

describe('conformance cases 23-32', () => {
  it('23: JSON records in, records out', async () => {
    const res = await predictDataframe(jsonRequest('[{"col1":101}]'));
    expect(res.status).toBe(200);
    expect(getHeader(res, 'content-type')).toBe('application/json');
    expect(await bodyJson(res)).toEqual([{ col1: 202 }]);
  });

  it('24: text/csv with the pandas index column', async () => {
    const res = await predictDataframe(jsonRequest(',col1\n0,101\n', 'text/csv'));
    expect(res.status).toBe(200);
    expect(await bodyJson(res)).toEqual([{ col1: 202 }]);
  });

  it('25: parquet under its content types, and by its PAR1 framing under application/octet-stream or none', async () => {
    const file = new PandasDataFrame({ default_format: 'parquet' });
    const parquet = await readBody(await file.toHttpResponse(new dfd.DataFrame({ col1: [101] }), null));
    for (const ct of [
      'application/x-parquet',
      'application/vnd.apache.parquet',
      'application/octet-stream',
      null,
    ]) {
      const res = await predictDataframe(jsonRequest(parquet, ct));
      expect(res.status).toBe(200);
      expect(await bodyJson(res)).toEqual([{ col1: 202 }]);
    }
    // Bytes not framed as Parquet stay the default format (json here): no content type picks the Parquet decoder.
    const notParquet = Buffer.concat([Buffer.from('PAR1'), Buffer.alloc(16)]);
    const asBytes = await predictDataframe(jsonRequest(notParquet, 'application/octet-stream'));
    expect(asBytes.status).toBe(400);
    // A body that names CSV is read as CSV, whatever its bytes.
    const asCsv = await predictDataframe(jsonRequest(parquet, 'text/csv'));
    expect(asCsv.status).not.toBe(200);
  });

  it('26 (docs/spec/io-descriptors.md D2): text/csv; charset=utf-8 is CSV', async () => {
    const res = await predictDataframe(jsonRequest(',col1\n0,101\n', 'text/csv; charset=utf-8'));
    expect(res.status).toBe(200);
    expect(await bodyJson(res)).toEqual([{ col1: 202 }]);
    const upper = await predictDataframe(jsonRequest(',col1\n0,101\n', 'TEXT/CSV'));
    expect(await bodyJson(upper)).toEqual([{ col1: 202 }]);
  });

  it('27: no content type → default format json', async () => {
    const res = await predictDataframe(jsonRequest('[{"col1":101}]', null));
    expect(res.status).toBe(200);
    expect(await bodyJson(res)).toEqual([{ col1: 202 }]);
  });

  it('28: numeric strings are inferred as numbers', async () => {
    expect(await bodyJson(await predictDataframe(jsonRequest('[{"col1":"7"}]')))).toEqual([{ col1: 14 }]);
  });

  it('29 (docs/spec/io-descriptors.md D3): floats written as JavaScript writes them', async () => {
    const res = await predictDataframe(jsonRequest('[{"col1":1.5}]'));
    expect(await bodyText(res)).toBe('[{"col1":3}]');
  });

  it('30: CSV output as pandas writes it', async () => {
    const res = await call(
      new PandasDataFrame(),
      new PandasDataFrame({ default_format: 'csv' }),
      (x) => x,
      jsonRequest('[{"a":1,"b":"x"},{"a":2.5,"b":null}]'),
    );
    expect(res.status).toBe(200);
    expect(getHeader(res, 'content-type')).toBe('text/csv; charset=utf-8');
    expect(await bodyText(res)).toBe(',a,b\n0,1.0,x\n1,2.5,\n');
  });

  it('31: split output', async () => {
    const res = await call(
      new PandasDataFrame(),
      new PandasDataFrame({ orient: 'split' }),
      (x) => x,
      jsonRequest('[{"a":1,"b":"x"},{"a":2,"b":null}]'),
    );
    expect(await bodyText(res)).toBe('{"columns":["a","b"],"index":[0,1],"data":[[1,"x"],[2,null]]}');
  });

  it('32: series echo', async () => {
    const res = await call(new PandasSeries(), new PandasSeries(), (x: Series) => x, jsonRequest('[1,2,3]'));
    expect(res.status).toBe(200);
    expect(await bodyText(res)).toBe('[1,2,3]');
  });
});

describe('docs/spec/io-descriptors.md D1: bad input is 400 BadInput with a precise message', () => {
  const cases: Array<[string, string, string | null, RegExp]> = [
    ['invalid JSON', '[{"col1":', 'application/json', /not valid JSON/],
    [
      'records not an array',
      '{"col1":1}',
      'application/json',
      /expected a JSON array of row objects, got object/,
    ],
    ['row not an object', '[{"col1":1}, 5]', 'application/json', /row 1 is number/],
    ['ragged CSV', 'a,b\n1,2\n3\n', 'text/csv', /CSV data row 2 \(line 3\) has 1 fields, expected 2/],
    ['unterminated CSV quote', 'a\n"x\n', 'text/csv', /line 2: unterminated quoted field/],
    ['garbage parquet', 'not parquet', 'application/vnd.apache.parquet', /not a readable Parquet file/],
  ];
  for (const [name, body, ct, message] of cases) {
    it(name, async () => {
      const err = await new PandasDataFrame().fromHttpRequest(jsonRequest(body, ct)).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(BadInput);
      expect((err as BadInput).httpStatus).toBe(400);
      expect((err as Error).message).toMatch(message);
    });
  }

  it('failing enforced cast names the column and row', async () => {
    const d = new PandasDataFrame({ dtype: { col1: 'int64' }, enforce_dtype: true });
    const err = await d.fromHttpRequest(jsonRequest('[{"col1":1},{"col1":"x"}]')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BadInput);
    expect((err as Error).message).toBe(
      `PandasDataFrame: column 'col1' row 1 (position 1): cannot convert "x" to int64: not an integer`,
    );
  });

  it('series with bad JSON and bad split', async () => {
    await expect(new PandasSeries().fromHttpRequest(jsonRequest('[1,'))).rejects.toBeInstanceOf(BadInput);
    await expect(new PandasSeries({ orient: 'split' }).fromHttpRequest(jsonRequest('[1]'))).rejects.toThrow(
      /orient 'split'/,
    );
  });
});

async function readBody(res: HttpResponse): Promise<Buffer> {
  const { readResponseBody } = await import('@tiffin/core/internal');
  return readResponseBody(res);
}
