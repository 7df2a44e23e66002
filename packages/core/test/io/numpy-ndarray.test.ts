import { describe, expect, it } from 'vitest';
import { Context } from '../../src/context/context.js';
import { InvalidArgument, UnprocessableEntity } from '../../src/errors/index.js';
import { descriptorFromSpec } from '../../src/io/descriptor.js';
import { NumpyNdarray } from '../../src/io/descriptors/numpy-ndarray.js';
import { NDArray } from '../../src/ndarray/index.js';
import { applyResponseContext } from '../../src/runtime/response-context.js';
import { expectClientError, header, request, text } from './helpers.js';

const double = (a: NDArray) => NDArray.from((a.toArray() as number[][]).map((r) => r.map((v) => v * 2)));

describe('NumpyNdarray construction (2.1, docs/spec/io-descriptors.md D8)', () => {
  it('normalises dtype aliases', () => {
    expect(new NumpyNdarray({ dtype: 'f4' }).dtype).toBe('float32');
  });
  it('unknown dtype → UnprocessableEntity', () => {
    expect(() => new NumpyNdarray({ dtype: 'nope' })).toThrow(UnprocessableEntity);
  });
  it('docs/spec/io-descriptors.md D8: enforce_dtype without dtype and enforce_shape without shape throw InvalidArgument', () => {
    expect(() => new NumpyNdarray({ enforce_dtype: true })).toThrow(InvalidArgument);
    expect(() => new NumpyNdarray({ enforce_shape: true })).toThrow(InvalidArgument);
  });
  it('a bad shape is InvalidArgument', () => {
    expect(() => new NumpyNdarray({ shape: [2, -3] })).toThrow(InvalidArgument);
  });
});

describe('NumpyNdarray fromHttpRequest / toHttpResponse', () => {
  const enforceShape = new NumpyNdarray({ shape: [2, 2], enforce_shape: true });

  it('case 1: enforce_shape accepts (2, 2) and the output is compact JSON', async () => {
    const arr = await enforceShape.fromHttpRequest(request('[[1, 2], [3, 4]]', 'application/json'));
    expect(arr.dtype).toBe('int64');
    const res = await new NumpyNdarray({ shape: [2, 2] }).toHttpResponse(double(arr), null);
    expect(res.status).toBe(200);
    expect(header(res, 'content-type')).toBe('application/json');
    expect(header(res, 'content-length')).toBe('13');
    expect(JSON.parse(await text(res))).toEqual([
      [2, 4],
      [6, 8],
    ]);
    expect(await text(res)).toBe('[[2,4],[6,8]]');
  });

  it('case 2: default descriptors in and out', async () => {
    const d = new NumpyNdarray();
    const arr = await d.fromHttpRequest(request('[[1, 2], [3, 4]]', 'application/json'));
    expect(
      await text(
        await d.toHttpResponse(
          NDArray.from([
            [2, 4],
            [6, 8],
          ]),
          null,
        ),
      ),
    ).toBe('[[2,4],[6,8]]');
    expect(arr.shape).toEqual([2, 2]);
  });

  it('case 3: enforce_shape rejects (4,) with the spec message', async () => {
    await expectClientError(
      enforceShape.fromHttpRequest(request('[1, 2, 3, 4]')),
      400,
      'NumpyNdarray: Expecting ndarray of shape "(2, 2)", but "(4,)" was received.',
    );
  });

  it('case 4: uint8 enforced in, str out', async () => {
    const input = new NumpyNdarray({ dtype: 'uint8', enforce_dtype: true });
    const arr = await input.fromHttpRequest(request('[[2, 1], [4, 3]]'));
    expect(arr.dtype).toBe('uint8');
    expect(arr.data).toBeInstanceOf(Uint8Array);
    const res = await new NumpyNdarray({ dtype: 'str' }).toHttpResponse(double(arr), null);
    expect(JSON.parse(await text(res))).toEqual([
      ['4', '2'],
      ['8', '6'],
    ]);
  });

  it('case 5: a failed conversion falls back to inference, then enforce_dtype rejects it', async () => {
    const input = new NumpyNdarray({ dtype: 'uint8', enforce_dtype: true });
    await expectClientError(
      input.fromHttpRequest(request('[["2f", 1], [4, 3]]')),
      400,
      /^NumpyNdarray: Expecting ndarray of dtype "uint8", but "/,
    );
  });

  it('without enforce_dtype a non-castable array passes unchanged', async () => {
    const arr = await new NumpyNdarray({ dtype: 'uint8' }).fromHttpRequest(request('["2f", 1]'));
    expect(arr.dtype).toBe('str');
  });

  it('out-of-range integers fall back to int64 and then fail the same-kind check (2.3 decision)', async () => {
    await expectClientError(
      new NumpyNdarray({ dtype: 'uint8', enforce_dtype: true }).fromHttpRequest(request('[300]')),
      400,
      'NumpyNdarray: Expecting ndarray of dtype "uint8", but "int64" was received.',
    );
  });

  it('same-kind casts apply on input without enforcement: int → float32', async () => {
    const arr = await new NumpyNdarray({ dtype: 'float32' }).fromHttpRequest(request('[1, 2]'));
    expect(arr.dtype).toBe('float32');
  });

  it('case 6: the Content-Type is ignored', async () => {
    const d = new NumpyNdarray();
    const arr = await d.fromHttpRequest(request('[[1,2],[3,4]]', 'text/plain'));
    const res = await d.toHttpResponse(arr, null);
    expect(header(res, 'content-type')).toBe('application/json');
    expect(await text(res)).toBe('[[1,2],[3,4]]');
  });

  it('case 7 (docs/spec/io-descriptors.md D1): invalid JSON and an empty body are 400', async () => {
    const d = new NumpyNdarray();
    await expectClientError(d.fromHttpRequest(request('not json')), 400, /not valid JSON: Expecting value/);
    await expectClientError(d.fromHttpRequest(request('')), 400, /not valid JSON/);
    await expectClientError(d.fromHttpRequest(request(Buffer.from([0x5b, 0xe9, 0x5d]))), 400, /UTF-8/);
  });

  it('case 8 (docs/spec/io-descriptors.md D1): a ragged array is 400', async () => {
    await expectClientError(new NumpyNdarray().fromHttpRequest(request('[[1,2],[3]]')), 400, /Ragged/);
  });

  it('case 9: strings, raw UTF-8 out (docs/spec/io-descriptors.md D3)', async () => {
    const d = new NumpyNdarray();
    const arr = await d.fromHttpRequest(request('["é", 1.5]'));
    expect(JSON.parse(await text(await d.toHttpResponse(arr, null)))).toEqual(['é', '1.5']);
  });

  it('case 10 (docs/spec/io-descriptors.md D3): NaN/Infinity literals are read; written as null', async () => {
    const d = new NumpyNdarray();
    const arr = await d.fromHttpRequest(request('[1.5, NaN, Infinity]'));
    expect(arr.dtype).toBe('float64');
    expect(await text(await d.toHttpResponse(arr, null))).toBe('[1.5,null,null]');
  });

  it('case 11: float32 values are widened to double on output', async () => {
    const arr = await new NumpyNdarray({ dtype: 'float32' }).fromHttpRequest(request('[0.1, 1, 2]'));
    expect(JSON.parse(await text(await new NumpyNdarray().toHttpResponse(arr, null)))).toEqual([
      0.10000000149011612, 1, 2,
    ]);
  });

  it('case 12: output enforce_shape answers 400', async () => {
    const out = new NumpyNdarray({ shape: [3], enforce_shape: true });
    await expectClientError(
      out.toHttpResponse(NDArray.from([1, 2]), null),
      400,
      'NumpyNdarray: Expecting ndarray of shape "(3,)", but "(2,)" was received.',
    );
  });

  it('output enforce_dtype answers 400 for a non-castable dtype', async () => {
    const out = new NumpyNdarray({ dtype: 'int32', enforce_dtype: true });
    await expectClientError(out.toHttpResponse(NDArray.from([1.5]), null), 400, /dtype "int32"/);
  });

  it('without enforce_shape the array is reshaped when possible, else kept', async () => {
    const d = new NumpyNdarray({ shape: [-1, 2] });
    expect((await d.fromHttpRequest(request('[1, 2, 3, 4]'))).shape).toEqual([2, 2]);
    expect((await d.fromHttpRequest(request('[1, 2, 3]'))).shape).toEqual([3]);
  });

  it('int64 values beyond 2^53 are exact in and out', async () => {
    const d = new NumpyNdarray({ dtype: 'int64' });
    const arr = await d.fromHttpRequest(request('[9007199254740993, 1]'));
    expect(arr.data[0]).toBe(9007199254740993n);
    expect(await text(await d.toHttpResponse(arr, null))).toBe('[9007199254740993,1]');
    const u = await new NumpyNdarray({ dtype: 'uint64' }).fromHttpRequest(request('[18446744073709551615]'));
    expect(u.data[0]).toBe(18446744073709551615n);
  });

  it('a UTF-8 BOM is accepted', async () => {
    const body = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('[1]')]);
    expect((await new NumpyNdarray().fromHttpRequest(request(body))).toArray()).toEqual([1]);
  });

  it('objects and 0-d values', async () => {
    const d = new NumpyNdarray();
    const obj = await d.fromHttpRequest(request('{"a": 1}'));
    expect(obj.dtype).toBe('object');
    expect(await text(await d.toHttpResponse(obj, null))).toBe('{"a":1}');
    expect(await text(await d.toHttpResponse(await d.fromHttpRequest(request('5')), null))).toBe('5');
    expect(await text(await d.toHttpResponse(await d.fromHttpRequest(request('[null, 1]')), null))).toBe(
      '[null,1]',
    );
  });

  it('plain nested arrays returned by a handler are accepted (2.5 decision)', async () => {
    expect(await text(await new NumpyNdarray().toHttpResponse([[1, 2]], null))).toBe('[[1,2]]');
  });

  it('a non-array result is a server error (500), not a client error', async () => {
    await expectClientError(new NumpyNdarray().toHttpResponse([[1], [2, 3]], null), 500);
  });

  it('ctx status, headers and cookies apply (1.3 rule 4)', async () => {
    const ctx = new Context(request(''), {});
    ctx.response.status = 201;
    ctx.response.headers.set('x-a', '1');
    ctx.response.setCookie('sess', 'abc', { maxAge: 10 });
    const res = applyResponseContext(await new NumpyNdarray().toHttpResponse(NDArray.from([1]), ctx), ctx);
    expect(res.status).toBe(201);
    expect(res.headers).toEqual([
      ['x-a', '1'],
      ['content-length', '3'],
      ['content-type', 'application/json'],
      ['set-cookie', 'sess=abc; Max-Age=10; Path=/; SameSite=lax'],
    ]);
  });
});

describe('NumpyNdarray.fromSample (2.6)', () => {
  it('takes dtype and shape from the sample unless given', () => {
    const d = NumpyNdarray.fromSample([[1.5, 2]]);
    expect(d.dtype).toBe('float64');
    expect(d.shape).toEqual([1, 2]);
    expect(d.enforce_shape).toBe(false);
    const e = NumpyNdarray.fromSample([[1, 2]], { dtype: 'float32', shape: [-1, 2], enforce_shape: true });
    expect(e.dtype).toBe('float32');
    expect(e.shape).toEqual([-1, 2]);
    expect(e.sample).toBeInstanceOf(NDArray);
  });
  it('scalars and ragged samples are BadInput', () => {
    expect(() => NumpyNdarray.fromSample(5)).toThrow(/expects an array/);
    expect(() => NumpyNdarray.fromSample([[1], [2, 3]])).toThrow(/is not an ND-array/);
  });
});

describe('NumpyNdarray OpenAPI and spec (2.7, 2.8, docs/spec/io-descriptors.md D13)', () => {
  it('schema item types', () => {
    expect(new NumpyNdarray({ shape: [2, 2] }).openapiSchema()).toEqual({
      type: 'array',
      items: { type: 'array', items: { type: 'integer' } },
      nullable: true,
    });
    // One level per dimension: an image batch [-1, 3, 224, 224] is four deep, as the API page must show it.
    expect(new NumpyNdarray({ dtype: 'float32', shape: [2, 2, 2] }).openapiSchema()).toEqual({
      type: 'array',
      items: { type: 'array', items: { type: 'array', items: { type: 'number' } } },
      nullable: true,
    });
    expect(new NumpyNdarray({ dtype: 'float32', shape: [-1, 3, 224, 224] }).openapiSchema()).toEqual({
      type: 'array',
      items: { type: 'array', items: { type: 'array', items: { type: 'array', items: { type: 'number' } } } },
      nullable: true,
    });
    expect(new NumpyNdarray({ dtype: 'bool' }).openapiSchema()).toEqual({
      type: 'array',
      items: { type: 'boolean' },
      nullable: true,
    });
    expect(new NumpyNdarray({ dtype: 'str' }).openapiSchema().items).toEqual({ type: 'string' });
    expect(new NumpyNdarray({ dtype: 'uint8' }).openapiSchema().items).toEqual({ type: 'integer' });
  });
  it('example, request body and responses', () => {
    const d = NumpyNdarray.fromSample([[1, 2]]);
    expect(d.openapiExample()).toEqual([[1, 2]]);
    // Without a sample: the declared dtype in the declared shape, -1 as 1 (what the API page pre-fills).
    expect(new NumpyNdarray().openapiExample()).toBeNull();
    expect(new NumpyNdarray().openapiRequestExample()).toEqual([0]);
    const rows = new NumpyNdarray({ dtype: 'float32', shape: [-1, 4] });
    expect(rows.openapiRequestExample()).toEqual([[0, 0, 0, 0]]);
    expect(rows.openapiRequestBody().content['application/json']!.example).toEqual([[0, 0, 0, 0]]);
    expect(new NumpyNdarray({ dtype: 'bool', shape: [2] }).openapiRequestExample()).toEqual([false, false]);
    expect(new NumpyNdarray({ dtype: 'str', shape: [1, -1] }).openapiRequestExample()).toEqual([['']]);
    expect(new NumpyNdarray({ shape: [512, 512, 3] }).openapiRequestExample()).toBeNull();
    const body = d.openapiRequestBody();
    expect(body.required).toBe(true);
    expect(body.content['application/json']!.example).toEqual([[1, 2]]);
    expect(body['x-tiffin-io-descriptor']).toEqual(d.toSpec());
    const res = new NumpyNdarray().openapiResponses();
    expect(res.description).toBe('Successful Response');
    expect(res.content['application/json']).toEqual({ schema: new NumpyNdarray().openapiSchema() });
    expect(d.openapiComponents()).toBeNull();
  });
  it('case 62: toSpec / fromSpec round-trip', () => {
    const d = new NumpyNdarray({ shape: [2, 2], enforce_shape: true });
    expect(d.toSpec()).toEqual({
      id: 'tiffin.io.NumpyNdarray',
      args: { dtype: null, shape: [2, 2], enforce_dtype: false, enforce_shape: true },
    });
    const back = descriptorFromSpec(d.toSpec()) as NumpyNdarray;
    expect(back).toBeInstanceOf(NumpyNdarray);
    expect(back.toSpec()).toEqual(d.toSpec());
    expect(() => NumpyNdarray.fromSpec({ id: 'tiffin.io.NumpyNdarray' })).toThrow(
      /^Missing args key in NumpyNdarray spec/,
    );
  });
});
