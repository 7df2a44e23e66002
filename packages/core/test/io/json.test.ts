import { describe, expect, it } from 'vitest';
import { Context } from '../../src/context/context.js';
import { defaultJsonEncoder, registerJsonEncoder } from '../../src/encoding/json-encoder.js';
import { BadInput } from '../../src/errors/index.js';
import { descriptorFromSpec } from '../../src/io/descriptor.js';
import { JSON as JSONDescriptor } from '../../src/io/descriptors/json.js';
import { registerSchemaModelAdapter, type SchemaModelAdapter } from '../../src/io/schema-model.js';
import { NDArray } from '../../src/ndarray/index.js';
import { applyResponseContext } from '../../src/runtime/response-context.js';
import { fromValueMessage, toValueMessage } from '../../src/wire/proto/struct.js';
import { expectClientError, header, request, text } from './helpers.js';

/** A tiny schema model: required string fields + string-array fields, with "5" → 5 coercion for numbers. */
interface TinyModel {
  kind: 'tiny';
  name: string;
  fields: Record<string, 'string' | 'string[]' | 'number'>;
}
const tinyAdapter: SchemaModelAdapter = {
  name: 'tiny',
  accepts: (m) => (m as TinyModel)?.kind === 'tiny',
  async validate(model, value) {
    const m = model as TinyModel;
    if (typeof value !== 'object' || value === null)
      return { ok: false, issues: [{ path: [], message: 'expected object' }] };
    const v = value as Record<string, unknown>;
    const out: Record<string, unknown> = {};
    const issues = [];
    for (const [k, t] of Object.entries(m.fields)) {
      const x = v[k];
      if (t === 'string' && typeof x !== 'string') issues.push({ path: [k], message: 'Field required' });
      else if (t === 'string[]' && !(Array.isArray(x) && x.every((s) => typeof s === 'string')))
        issues.push({ path: [k], message: 'Field required' });
      else if (t === 'number') {
        const n = Number(x);
        if (Number.isNaN(n)) issues.push({ path: [k], message: 'not a number' });
        out[k] = n;
        continue;
      }
      out[k] = x;
    }
    return issues.length ? { ok: false, issues } : { ok: true, value: out };
  },
  modelName: (m) => (m as TinyModel).name,
  jsonSchema: (m) => ({
    schema: { title: (m as TinyModel).name, type: 'object', required: Object.keys((m as TinyModel).fields) },
    components: {},
  }),
};
registerSchemaModelAdapter(tinyAdapter);
const Structure: TinyModel = {
  kind: 'tiny',
  name: 'Structure',
  fields: { name: 'string', endpoints: 'string[]' },
};

describe('JSON fromHttpRequest / toHttpResponse (docs/spec/io-descriptors.md §5, cases 14-22)', () => {
  const echo = async (body: string, d = new JSONDescriptor()) =>
    d.toHttpResponse(await d.fromHttpRequest(request(body, 'application/json')), null);

  it('case 14: a string', async () => {
    const res = await echo('"hi"');
    expect(header(res, 'content-length')).toBe('4');
    expect(header(res, 'content-type')).toBe('application/json');
    expect(await text(res)).toBe('"hi"');
  });

  it('case 15: compact, raw UTF-8', async () => {
    const res = await echo('{"a": 1, "b": [1, 2.50, "é"]}');
    const body = await text(res);
    expect(body).toBe('{"a":1,"b":[1,2.5,"é"]}');
    expect(header(res, 'content-length')).toBe('24');
  });

  it.each(['1', '2.2', '"str"', '[1,2,3]', '{"a":1,"b":2}'])(
    'case 16: %s echoes byte-identical',
    async (b) => {
      expect(await text(await echo(b))).toBe(b);
    },
  );

  it('case 17 (docs/spec/io-descriptors.md D3): 2.0 and big integers echo as equal parsed values', async () => {
    expect(JSON.parse(await text(await echo('2.0')))).toBe(2);
    expect(JSON.parse(await text(await echo('12345678901234567890123')))).toBe(
      Number('12345678901234567890123'),
    );
  });

  it('case 18: invalid JSON (and an empty body, and bad UTF-8) → 400', async () => {
    const d = new JSONDescriptor();
    await expectClientError(
      () => d.fromHttpRequest(request('not json')),
      400,
      /^Invalid JSON input received: /,
    );
    await expectClientError(
      () => d.fromHttpRequest(request('')),
      400,
      /^Invalid JSON input received: Expecting value/,
    );
    await expectClientError(() => d.fromHttpRequest(request(Buffer.from([0x22, 0xe9, 0x22]))), 400, /UTF-8/);
  });

  it('case 19 (docs/spec/io-descriptors.md D3): NaN is read and written as null', async () => {
    expect(await text(await echo('{"a": NaN}'))).toBe('{"a":null}');
  });

  it('case 20: a valid structure passes the model', async () => {
    const d = new JSONDescriptor({ pydantic_model: Structure });
    const res = await echo('{"name": "test", "endpoints": ["predict", "health"]}', d);
    expect(await text(res)).toBe('{"name":"test","endpoints":["predict","health"]}');
  });

  it('case 21: an invalid structure → 400 with issues in detail', async () => {
    const d = new JSONDescriptor({ pydantic_model: Structure });
    const err = await expectClientError(
      () => d.fromHttpRequest(request('{"name": "test"}')),
      400,
      /^Invalid JSON input received: endpoints: Field required/,
    );
    expect(err).toBeInstanceOf(BadInput);
    expect(err.detail).toEqual([{ path: ['endpoints'], message: 'Field required' }]);
    expect(err.toBody()).toMatchObject({ type: 'BadInput', detail: [{ path: ['endpoints'] }] });
  });

  it('model coercion: the validated value reaches the handler', async () => {
    const d = new JSONDescriptor({ pydantic_model: { kind: 'tiny', name: 'N', fields: { n: 'number' } } });
    expect(await d.fromHttpRequest(request('{"n": "5"}'))).toEqual({ n: 5 });
  });

  it('case 22: null → empty body, content-type application/json', async () => {
    const res = await new JSONDescriptor().toHttpResponse(null, null);
    expect(res.headers).toEqual([
      ['content-length', '0'],
      ['content-type', 'application/json'],
    ]);
    expect(await text(res)).toBe('');
    expect(await text(await new JSONDescriptor().toHttpResponse(undefined, null))).toBe('');
  });

  it('a UTF-8 BOM is accepted and the Content-Type ignored', async () => {
    const body = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"a":1}')]);
    expect(await new JSONDescriptor().fromHttpRequest(request(body, 'text/plain'))).toEqual({ a: 1 });
  });

  it('ctx applies', async () => {
    const ctx = new Context(request(''), {});
    ctx.response.status = 202;
    ctx.response.headers.set('x-b', '2');
    const res = applyResponseContext(await new JSONDescriptor().toHttpResponse({ a: 1 }, ctx), ctx);
    expect(res.status).toBe(202);
    expect(res.headers[0]).toEqual(['x-b', '2']);
  });
});

describe('default JSON encoder', () => {
  class Point {
    constructor(
      public x: number,
      public y: number,
    ) {}
  }
  it('encodes NDArray, Map, Set, Date, BigInt, typed arrays, class instances', () => {
    const value = {
      arr: NDArray.from([[1, 2]]),
      m: new Map<string, unknown>([['k', new Set([1, 2])]]),
      d: new Date(Date.UTC(2024, 0, 2, 3, 4, 5)),
      small: 5n,
      big: 12345678901234567890n,
      f32: new Float32Array([0.5]),
      p: new Point(1, 2),
      nested: [undefined, () => 1],
      skip: undefined,
    };
    expect(defaultJsonEncoder(value)).toEqual({
      arr: [[1, 2]],
      m: { k: [1, 2] },
      d: '2024-01-02T03:04:05.000Z',
      small: 5,
      big: '12345678901234567890',
      f32: [0.5],
      p: { x: 1, y: 2 },
      nested: [null, null],
    });
  });
  it('registered rules win over the class-instance fallback', () => {
    class Frame {
      constructor(readonly cols: Record<string, number[]>) {}
    }
    registerJsonEncoder({
      name: 'frame',
      test: (v) => v instanceof Frame,
      encode: (v) => ({ frame: (v as Frame).cols }),
    });
    expect(defaultJsonEncoder([new Frame({ a: [1] })])).toEqual([{ frame: { a: [1] } }]);
  });
  it('the JSON descriptor uses it, and a custom json_encoder replaces it', async () => {
    const res = await new JSONDescriptor().toHttpResponse({ arr: NDArray.from([1.5]), n: Number.NaN }, null);
    expect(await text(res)).toBe('{"arr":[1.5],"n":null}');
    const custom = new JSONDescriptor({ json_encoder: (v) => ({ wrapped: defaultJsonEncoder(v) }) });
    expect(await text(await custom.toHttpResponse([1], null))).toBe('{"wrapped":[1]}');
    expect(custom.toSpec()).toEqual({
      id: 'tiffin.io.JSON',
      args: { has_pydantic_model: false, has_json_encoder: true },
    });
  });
  it('plain JSON data is returned as it is (no copy); BigInt or a class deep inside still gets encoded', () => {
    const plain = { a: [1, 'x', null, true, { b: [2.5] }], c: { d: null } };
    expect(defaultJsonEncoder(plain)).toBe(plain);
    const deepBigInt = { a: [{ b: [1n] }] };
    expect(defaultJsonEncoder(deepBigInt)).toEqual({ a: [{ b: [1] }] });
    const deepMap = [[{ m: new Map([['k', 1]]) }]];
    expect(defaultJsonEncoder(deepMap)).toEqual([[{ m: { k: 1 } }]]);
    const withToJson = { toJSON: () => 'custom' };
    expect(defaultJsonEncoder({ v: withToJson })).toEqual({ v: 'custom' });
  });
  it('a deeply nested cycle is still reported, not walked forever', () => {
    const root: Record<string, unknown> = {};
    let node = root;
    for (let i = 0; i < 100; i++) {
      const next: Record<string, unknown> = {};
      node.next = next;
      node = next;
    }
    node.next = root;
    expect(() => defaultJsonEncoder(root)).toThrow(/circular/);
  });
  it('the JSON writer keeps BigInt exact when it can and as a string when it cannot', async () => {
    const res = await new JSONDescriptor({ json_encoder: (v) => v }).toHttpResponse(
      { small: 7n, big: 2n ** 64n },
      null,
    );
    expect(await text(res)).toBe('{"small":7,"big":"18446744073709551616"}');
  });
  it('circular references are reported', () => {
    const a: Record<string, unknown> = {};
    a.self = a;
    expect(() => defaultJsonEncoder(a)).toThrow(/circular/);
  });
});

describe('JSON.fromSample (5.4)', () => {
  it('parses strings and bytes, keeps objects', () => {
    expect(JSONDescriptor.fromSample('{"a": 1}').sample).toEqual({ a: 1 });
    expect(JSONDescriptor.fromSample(Buffer.from('[1]')).sample).toEqual([1]);
    expect(JSONDescriptor.fromSample({ b: 2 }).sample).toEqual({ b: 2 });
  });
  it('errors are BadInput with the spec prefixes', () => {
    expect(() => JSONDescriptor.fromSample('{')).toThrow(/^Unable to parse JSON string\. /);
    expect(() => JSONDescriptor.fromSample(Buffer.from('{'))).toThrow(/^Unable to parse JSON bytes\. /);
    expect(() => JSONDescriptor.fromSample(5)).toThrow(/^Unable to infer JSON type from sample: 5\./);
  });
});

describe('JSON OpenAPI and spec (5.5, docs/spec/io-descriptors.md D13)', () => {
  it('without a model: any JSON value (the empty schema)', () => {
    const d = new JSONDescriptor();
    expect(d.openapiSchema()).toEqual({});
    expect(d.openapiComponents()).toEqual({});
    expect(d.openapiExample()).toBeNull();
    // Any JSON value is valid: the request example is an empty object, which the API page pre-fills.
    expect(d.openapiRequestExample()).toEqual({});
    expect(d.openapiRequestBody()).toEqual({
      content: { 'application/json': { schema: {}, example: {} } },
      required: true,
      'x-tiffin-io-descriptor': {
        id: 'tiffin.io.JSON',
        args: { has_pydantic_model: false, has_json_encoder: false },
      },
    });
    expect(JSONDescriptor.fromSample([1, 2]).openapiExample()).toEqual([1, 2]);
  });
  it('with a model: its schema and a component', () => {
    const d = new JSONDescriptor({ pydantic_model: Structure });
    expect(d.openapiSchema()).toEqual({
      title: 'Structure',
      type: 'object',
      required: ['name', 'endpoints'],
    });
    expect(d.openapiComponents()).toEqual({ schemas: { Structure: d.openapiSchema() } });
    expect(d.openapiResponses().content['application/json']!.schema).toEqual(d.openapiSchema());
    expect(d.toSpec().args).toEqual({ has_pydantic_model: true, has_json_encoder: false });
  });
  it('fromSpec gives a plain JSON()', () => {
    const back = descriptorFromSpec({
      id: 'tiffin.io.JSON',
      args: { has_pydantic_model: false, has_json_encoder: false },
    });
    expect(back).toBeInstanceOf(JSONDescriptor);
    expect(back.displayName).toBe('JSON');
    expect(() => JSONDescriptor.fromSpec({ id: 'tiffin.io.JSON' })).toThrow(/^Missing args key in JSON spec/);
  });
});

describe('JSON gRPC (11.3)', () => {
  it('reads Value messages and bytes; writes Values', async () => {
    const d = new JSONDescriptor();
    // Built with the gRPC helper so the test follows the message shape it uses.
    const v = await d.fromProto(toValueMessage({ a: 1, b: ['x'] }));
    expect(v).toEqual({ a: 1, b: ['x'] });
    expect(await d.fromProto(Buffer.from('{"z": true}'))).toEqual({ z: true });
    await expectClientError(d.fromProto(Buffer.from('nope')), 400, /^Invalid JSON input received/);
    expect(fromValueMessage(await d.toProto({ k: [1, 'a'] }))).toEqual({ k: [1, 'a'] });
    expect(await d.toProto(null)).toEqual({});
  });
  it('validates against the model', async () => {
    const d = new JSONDescriptor({ pydantic_model: Structure });
    await expectClientError(d.fromProto(Buffer.from('{"name": "x"}')), 400, /endpoints/);
  });
});
