import { BadInput, Context, InvalidArgument, UnprocessableEntity } from '@tiffin/core';
import {
  applyResponseContext,
  descriptorFromSpec,
  GrpcStatus,
  jsonEncoderRules,
  readResponseBody,
} from '@tiffin/core/internal';
import { describe, expect, it } from 'vitest';
import { loadDanfo, PandasDataFrame, PandasSeries } from '../src/index.js';
import { bodyJson, bodyText, getHeader, jsonRequest } from './helpers.js';

const dfd = await loadDanfo();
const frame = () =>
  new dfd.DataFrame(
    [
      [1, 0.5],
      [2, Number.NaN],
    ],
    { columns: ['a', 'b'], dtypes: ['int32', 'float32'] },
  );

const ORIENT_BODIES = {
  records: '[{"a":1,"b":0.5},{"a":2,"b":null}]',
  columns: '{"a":{"0":1,"1":2},"b":{"0":0.5,"1":null}}',
  index: '{"0":{"a":1,"b":0.5},"1":{"a":2,"b":null}}',
  split: '{"columns":["a","b"],"index":[0,1],"data":[[1,0.5],[2,null]]}',
  values: '[[1,0.5],[2,null]]',
  table:
    '{"schema":{"fields":[{"name":"index","type":"integer"},{"name":"a","type":"integer"},{"name":"b","type":"number"}],"primaryKey":["index"],"pandas_version":"1.4.0"},"data":[{"index":0,"a":1,"b":0.5},{"index":1,"a":2,"b":null}]}',
} as const;

describe('orients both ways', () => {
  for (const [orient, text] of Object.entries(ORIENT_BODIES)) {
    it(`${orient}: writes the spec layout and reads it back`, async () => {
      const d = new PandasDataFrame({ orient: orient as keyof typeof ORIENT_BODIES });
      const out = await bodyText(await d.toHttpResponse(frame(), null));
      const expected = orient === 'values' ? text : text;
      expect(out).toBe(expected);
      const back = await d.fromHttpRequest(jsonRequest(out));
      expect(back.shape).toEqual([2, 2]);
      expect(back.index).toEqual([0, 1]);
      expect(back.dtypes).toEqual(['int32', 'float32']);
      expect(await bodyText(await d.toHttpResponse(back, null))).toBe(expected);
    });
  }

  it('records: union of keys in first-seen order, missing cells null', async () => {
    const df = await new PandasDataFrame().fromHttpRequest(jsonRequest('[{"a":1},{"b":"x","a":2}]'));
    expect(df.columns).toEqual(['a', 'b']);
    expect(df.values).toEqual([
      [1, null],
      [2, 'x'],
    ]);
  });

  it('split with string index labels; index orient with integer-looking labels', async () => {
    const s = await new PandasDataFrame({ orient: 'split' }).fromHttpRequest(
      jsonRequest('{"columns":["v"],"index":["x","y"],"data":[[1],[2]]}'),
    );
    expect(s.index).toEqual(['x', 'y']);
    const i = await new PandasDataFrame({ orient: 'index' }).fromHttpRequest(
      jsonRequest('{"10":{"v":1},"k":{"v":2}}'),
    );
    expect(i.index).toEqual([10, 'k']);
  });

  it('non-finite floats are written as null (docs/spec/io-descriptors.md D3)', async () => {
    const df = new dfd.DataFrame({ f: [Number.POSITIVE_INFINITY, 1.25] });
    expect(await bodyText(await new PandasDataFrame({ orient: 'values' }).toHttpResponse(df, null))).toBe(
      '[[null],[1.25]]',
    );
  });
});

describe('dtype', () => {
  it('inference: integral floats → int, bool+null → float, mixed → object', async () => {
    const df = await new PandasDataFrame().fromHttpRequest(
      jsonRequest('[{"i":1.0,"b":true,"m":1,"s":"x"},{"i":2,"b":null,"m":"y","s":"z"}]'),
    );
    expect(df.dtypes).toEqual(['int32', 'float32', 'string', 'string']);
    expect(df.values).toEqual([
      [1, 1, 1, 'x'],
      [2, Number.NaN, 'y', 'z'],
    ]);
  });

  it('dtype false: numeric strings stay text', async () => {
    const df = await new PandasDataFrame({ dtype: false }).fromHttpRequest(jsonRequest('[{"c":"7"}]'));
    expect(df.values).toEqual([['7']]);
    const inferred = await new PandasDataFrame({ dtype: true }).fromHttpRequest(jsonRequest('[{"c":"7"}]'));
    expect(inferred.values).toEqual([[7]]);
  });

  it('a dtype map is applied to incoming data with enforce_dtype (JSON and CSV)', async () => {
    const d = new PandasDataFrame({ dtype: { a: 'float64', b: 'str', c: 'int8' }, enforce_dtype: true });
    const df = await d.fromHttpRequest(jsonRequest('[{"a":1,"b":2,"c":1.7,"d":"5"}]'));
    expect(df.dtypes).toEqual(['float32', 'string', 'int32', 'int32']);
    expect(df.values).toEqual([[1, '2', 1, 5]]);
    const csv = await d.fromHttpRequest(jsonRequest('a,b,c\n1,2,3\n', 'text/csv'));
    expect(csv.values).toEqual([[1, '2', 3]]);
    await expect(d.fromHttpRequest(jsonRequest('a,b,c\n1,2,300\n', 'text/csv'))).rejects.toThrow(
      /column 'c' row 0 \(position 0\): cannot convert "300" to int8: out of range \[-128, 127\]/,
    );
  });

  it('without enforce_dtype the map does not cast', async () => {
    const df = await new PandasDataFrame({ dtype: { a: 'str' } }).fromHttpRequest(jsonRequest('[{"a":1}]'));
    expect(df.values).toEqual([[1]]);
  });

  it('unknown dtype names are rejected at construction', () => {
    expect(() => new PandasDataFrame({ dtype: { a: 'int65' } })).toThrow(UnprocessableEntity);
  });
});

describe('construction rules (docs/spec/io-descriptors.md D8) and options', () => {
  it('enforce flags without their value throw InvalidArgument', () => {
    expect(() => new PandasDataFrame({ enforce_dtype: true })).toThrow(InvalidArgument);
    expect(() => new PandasDataFrame({ enforce_shape: true })).toThrow(InvalidArgument);
    expect(() => new PandasDataFrame({ apply_column_names: true })).toThrow(InvalidArgument);
    expect(() => new PandasSeries({ enforce_dtype: true })).toThrow(InvalidArgument);
    expect(() => new PandasSeries({ enforce_shape: true })).toThrow(InvalidArgument);
    expect(() => new PandasDataFrame({ default_format: 'xml' as 'json' })).toThrow(/default_format/);
    expect(() => new PandasDataFrame({ orient: 'rows' as 'records' })).toThrow(/orient/);
  });

  it('DataFrame and Series report option, gRPC and spec errors the same way', async () => {
    for (const [cls, owner] of [
      [PandasDataFrame, 'PandasDataFrame'],
      [PandasSeries, 'PandasSeries'],
    ] as const) {
      expect(() => new cls({ orient: 'rows' as 'records' })).toThrow(
        `${owner}: orient must be one of split, records, index, columns, values, table, got "rows"`,
      );
      expect(() => new cls({ enforce_dtype: true, enforce_shape: true })).toThrow(
        "'dtype' must be specified when 'enforce_dtype=True'",
      );
      expect(() => new cls({ enforce_shape: true })).toThrow(
        "'shape' must be specified when 'enforce_shape=True'",
      );
      const field = owner === 'PandasSeries' ? 'series' : 'dataframe';
      // The client's choice of field, so a 400 / INVALID_ARGUMENT (the reference's INTERNAL is a 5xx for it).
      await expect(new cls({ orient: 'columns' }).fromProto(new Uint8Array([1]))).rejects.toMatchObject({
        message: `${owner} does not read 'serialized_bytes'; send the '${field}' field`,
        code: 'BAD_INPUT',
        grpcStatus: GrpcStatus.INVALID_ARGUMENT,
      });
      expect(() => cls.fromSpec({ id: `tiffin.io.${owner}` })).toThrow(
        `Missing args key in ${owner} spec: {"id":"tiffin.io.${owner}"}`,
      );
    }
    // A frame's dtype `true` (infer) counts as given; a series needs one concrete dtype to enforce.
    expect(new PandasDataFrame({ dtype: true, enforce_dtype: true }).enforceDtype).toBe(true);
    expect(() => new PandasSeries({ dtype: true, enforce_dtype: true })).toThrow(/'dtype' must be specified/);
  });

  it('apply_column_names renames, and a count mismatch is a 400', async () => {
    const d = new PandasDataFrame({ columns: ['x', 'y'], apply_column_names: true });
    const df = await d.fromHttpRequest(jsonRequest('[{"a":1,"b":2}]'));
    expect(df.columns).toEqual(['x', 'y']);
    await expect(d.fromHttpRequest(jsonRequest('[{"a":1}]'))).rejects.toThrow(
      "length of 'columns' (2) does not match the # of columns of incoming data (1).",
    );
  });

  it('enforce_shape: a bare number is the column count; tuples compare with -1 wildcards', async () => {
    const d = new PandasDataFrame({ shape: 2, enforce_shape: true });
    await d.fromHttpRequest(jsonRequest('[{"a":1,"b":2},{"a":1,"b":2}]'));
    await expect(d.fromHttpRequest(jsonRequest('[{"a":1}]'))).rejects.toThrow(
      'PandasDataFrame: Expecting DataFrame of shape "(-1, 2)", but "(1, 1)" was received.',
    );
    const out = new PandasDataFrame({ shape: [3, -1], enforce_shape: true });
    await expect(out.toHttpResponse(frame(), null)).rejects.toBeInstanceOf(BadInput);
    const s = new PandasSeries({ shape: [3], enforce_shape: true });
    await expect(s.fromHttpRequest(jsonRequest('[1,2]'))).rejects.toThrow(
      "PandasSeries: Expecting Series of shape '(3,)', but '(2,)' was received.",
    );
  });

  it('returning something else is a 400 InvalidArgument', async () => {
    await expect(new PandasDataFrame().toHttpResponse([1] as never, null)).rejects.toThrow(
      "return object is not of type 'DataFrame' (danfojs-node), got type 'array' instead",
    );
    await expect(new PandasSeries().toHttpResponse(frame() as never, null)).rejects.toBeInstanceOf(
      InvalidArgument,
    );
  });

  it('context status, headers and cookies apply', async () => {
    const ctx = new Context(jsonRequest('x'), {});
    ctx.response.status = 201;
    ctx.response.headers.set('x-a', '1');
    ctx.response.setCookie('k', 'v');
    const res = applyResponseContext(
      await new PandasDataFrame({ default_format: 'csv' }).toHttpResponse(frame(), ctx),
      ctx,
    );
    expect(res.status).toBe(201);
    expect(res.headers.map(([n]) => n)).toEqual(['x-a', 'content-length', 'content-type', 'set-cookie']);
  });
});

describe('PandasSeries', () => {
  it('orients', async () => {
    const s = new dfd.Series([1, 2], { index: ['a', 'b'] });
    expect(await bodyText(await new PandasSeries({ orient: 'index' }).toHttpResponse(s, null))).toBe(
      '{"a":1,"b":2}',
    );
    expect(await bodyText(await new PandasSeries({ orient: 'split' }).toHttpResponse(s, null))).toBe(
      '{"name":null,"index":["a","b"],"data":[1,2]}',
    );
    const fromObj = await new PandasSeries({ orient: 'index' }).fromHttpRequest(jsonRequest('{"a":1,"b":2}'));
    expect(fromObj.index).toEqual(['a', 'b']);
    const split = await new PandasSeries({ orient: 'split' }).fromHttpRequest(
      jsonRequest('{"name":"n","index":["x"],"data":[5]}'),
    );
    expect(split.values).toEqual([5]);
    expect(split.index).toEqual(['x']);
  });

  it('enforce_dtype casts input and checks output', async () => {
    const d = new PandasSeries({ dtype: 'int64', enforce_dtype: true });
    expect((await d.fromHttpRequest(jsonRequest('[1.5, 2]'))).values).toEqual([1, 2]);
    await expect(d.fromHttpRequest(jsonRequest('["a"]'))).rejects.toThrow(/cannot convert "a" to int64/);
    await expect(d.toHttpResponse(new dfd.Series(['a', 'b']), null)).rejects.toThrow(
      'PandasSeries: Expecting series of dtype "int64", but "object" was received.',
    );
    // Same-kind casts are allowed: int → float output.
    const f = new PandasSeries({ dtype: 'float64', enforce_dtype: true });
    expect(await bodyText(await f.toHttpResponse(new dfd.Series([1, 2]), null))).toBe('[1,2]');
  });
});

describe('gRPC mapping (docs/spec/io-descriptors.md §11.3)', () => {
  it('DataFrame needs orient columns; round-trips messages', async () => {
    await expect(new PandasDataFrame().fromProto({ column_names: [], columns: [] })).rejects.toThrow(
      /only supports 'columns' orient/,
    );
    const d = new PandasDataFrame({ orient: 'columns' });
    const df = await d.fromProto({
      column_names: ['a', 'b'],
      columns: [{ int64_values: ['1', '2'] }, { double_values: [0.5, 1] }],
    });
    expect(df.index).toEqual(['0', '1']);
    expect(df.values).toEqual([
      [1, 0.5],
      [2, 1],
    ]);
    expect(await d.toProto(df)).toEqual({
      column_names: ['a', 'b'],
      columns: [{ int64_values: [1, 2] }, { double_values: [0.5, 1] }],
    });
    await expect(
      d.fromProto({ column_names: ['a'], columns: [{ int64_values: [1], double_values: [1] }] }),
    ).rejects.toThrow(/Array contents can only be one of given values key/);
    const mixed = new dfd.DataFrame({ m: [1, 'x'] }, { dtypes: ['string'] });
    await expect(d.toProto(mixed)).rejects.toBeInstanceOf(UnprocessableEntity);
  });

  it('Series messages', async () => {
    const s = await new PandasSeries().fromProto({ bool_values: [true, false] });
    expect(s.values).toEqual([true, false]);
    expect(await new PandasSeries().toProto(s)).toEqual({ bool_values: [true, false] });
    expect((await new PandasSeries().fromProto({})).values).toEqual([]);
    await expect(
      new PandasSeries().toProto(new dfd.Series([1, 'x'], { dtypes: ['string'] })),
    ).rejects.toThrow('Series has mixed dtype. Please convert it to a single dtype.');
  });
});

describe('OpenAPI, spec, samples, JSON encoder', () => {
  it('fromSample fills columns, dtype map and shape; schema and example follow the orient', async () => {
    const d = await PandasDataFrame.fromSample([{ a: 1, b: 'x' }], { orient: 'records' });
    expect(d.columns).toEqual(['a', 'b']);
    expect(d.shape).toEqual([1, 2]);
    expect(d.openapiSchema()).toEqual({
      type: 'array',
      items: { type: 'object', properties: { a: { type: 'integer' }, b: { type: 'object' } } },
    });
    expect(d.openapiRequestBody().content['application/json']).toEqual({
      schema: d.openapiSchema(),
      example: [{ a: 1, b: 'x' }],
    });
    expect(Object.keys(d.openapiRequestBody().content)).toEqual([
      'application/json',
      'text/csv',
      'application/vnd.apache.parquet',
    ]);
    const cols = await PandasDataFrame.fromSample(frame(), { orient: 'columns' });
    expect(cols.openapiExample()).toEqual({ a: { '0': 1, '1': 2 }, b: { '0': 0.5, '1': null } });
    expect(cols.openapiSchema()).toEqual({
      type: 'object',
      properties: {
        a: { type: 'object', additionalProperties: { type: 'integer' } },
        b: { type: 'object', additionalProperties: { type: 'number' } },
      },
    });
    const s = PandasSeries.fromSample([1.5, 2], { orient: 'index' });
    expect(s.openapiSchema()).toEqual({ type: 'object', additionalProperties: { type: 'number' } });
    expect(s.openapiExample()).toEqual({ '0': 1.5, '1': 2 });
  });

  it('toSpec/fromSpec round-trip through the registry', () => {
    const d = new PandasDataFrame({
      orient: 'split',
      dtype: { a: 'int' },
      enforce_dtype: true,
      shape: [-1, 1],
      enforce_shape: true,
      default_format: 'csv',
    });
    const spec = d.toSpec();
    expect(spec).toEqual({
      id: 'tiffin.io.PandasDataFrame',
      args: {
        orient: 'split',
        columns: null,
        apply_column_names: false,
        dtype: { a: 'int64' },
        shape: [-1, 1],
        enforce_dtype: true,
        enforce_shape: true,
        default_format: 'csv',
      },
    });
    const back = descriptorFromSpec(spec) as PandasDataFrame;
    expect(back).toBeInstanceOf(PandasDataFrame);
    expect(back.toSpec()).toEqual(spec);
    const s = new PandasSeries({ dtype: 'float32' });
    expect(descriptorFromSpec(s.toSpec()).toSpec()).toEqual({
      id: 'tiffin.io.PandasSeries',
      args: { orient: 'records', dtype: 'float32', shape: null, enforce_dtype: false, enforce_shape: false },
    });
    expect(() => PandasDataFrame.fromSpec({ id: 'tiffin.io.PandasDataFrame' })).toThrow(/Missing args/);
    // Serialised reference forms are accepted.
    expect(new PandasDataFrame({ dtype: 'null' }).dtype).toBeNull();
  });

  it('registers JSON encoders for DataFrame and Series', () => {
    const rule = jsonEncoderRules().find((r) => r.test(frame()));
    expect(rule?.encode(frame())).toEqual({ a: { '0': 1, '1': 2 }, b: { '0': 0.5, '1': Number.NaN } });
    const s = new dfd.Series([3], { index: ['k'] });
    const srule = jsonEncoderRules().find((r) => r.test(s));
    expect(srule?.encode(s)).toEqual({ k: 3 });
  });

  it('parquet response carries its media type', async () => {
    const res = await new PandasDataFrame({ default_format: 'parquet' }).toHttpResponse(frame(), null);
    expect(getHeader(res, 'content-type')).toBe('application/vnd.apache.parquet');
    expect((await readResponseBody(res)).subarray(0, 4).toString()).toBe('PAR1');
    expect(
      await bodyJson(
        await new PandasDataFrame().toHttpResponse(
          await new PandasDataFrame().fromHttpRequest(
            jsonRequest(await readResponseBody(res), 'application/vnd.apache.parquet'),
          ),
          null,
        ),
      ),
    ).toEqual([
      { a: 1, b: 0.5 },
      { a: 2, b: null },
    ]);
  });
});
