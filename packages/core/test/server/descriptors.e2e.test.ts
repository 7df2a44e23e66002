import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerSchemaModelAdapter, type SchemaModelAdapter } from '../../src/descriptor.js';
import {
  File,
  JSON as JSONDescriptor,
  Multipart,
  NDArray,
  NumpyNdarray,
  Service,
  Text,
} from '../../src/index.js';
import { start } from './helpers.js';

/** The structure model of case 20/21, validated by a test-local schema adapter (io-json provides real ones). */
const endpointsModel = { kind: 'endpoints-model' };
const adapter: SchemaModelAdapter = {
  name: 'test-endpoints',
  accepts: (model) => model === endpointsModel,
  async validate(_model, value) {
    const v = value as { name?: unknown; endpoints?: unknown };
    const issues = [];
    if (typeof v?.name !== 'string') issues.push({ path: ['name'], message: 'name must be a string' });
    if (!Array.isArray(v?.endpoints) || v.endpoints.some((e) => typeof e !== 'string')) {
      issues.push({ path: ['endpoints'], message: 'endpoints must be a list of strings' });
    }
    return issues.length ? { ok: false, issues } : { ok: true, value };
  },
  modelName: () => 'Endpoints',
  jsonSchema: () => ({
    schema: { type: 'object', properties: { name: { type: 'string' } } },
    components: {},
  }),
};
registerSchemaModelAdapter(adapter);

const svc = new Service('descriptor_e2e');
const times2 = (x: NDArray) => NDArray.from((x.toArray() as number[][]).map((r) => r.map((v) => v * 2)));
svc.api(
  {
    input: new NumpyNdarray({ shape: [2, 2], enforce_shape: true }),
    output: new NumpyNdarray({ shape: [2, 2] }),
  },
  function predict_ndarray_enforce_shape(x) {
    return times2(x);
  },
);
svc.api(
  {
    input: new NumpyNdarray({ dtype: 'uint8', enforce_dtype: true }),
    output: new NumpyNdarray({ dtype: 'str' }),
  },
  function predict_ndarray_enforce_dtype(x) {
    return times2(x);
  },
);
svc.api({ input: new NumpyNdarray(), output: new NumpyNdarray() }, function predict_ndarray_multi_output(x) {
  return times2(x);
});
svc.api({ input: new NumpyNdarray(), output: new NumpyNdarray() }, function nd_echo(x) {
  return x;
});
svc.api({ input: new NumpyNdarray({ dtype: 'float32' }), output: new NumpyNdarray() }, function nd_f32(x) {
  return x;
});
svc.api(
  { input: new NumpyNdarray(), output: new NumpyNdarray({ shape: [3], enforce_shape: true }) },
  function nd_out_enforce(x) {
    return x;
  },
);
svc.api({ input: new JSONDescriptor(), output: new JSONDescriptor() }, function echo_json(x) {
  return x;
});
svc.api(
  { input: new JSONDescriptor({ pydantic_model: endpointsModel }), output: new JSONDescriptor() },
  function echo_json_enforce_structure(x) {
    return x;
  },
);
svc.api({ input: new JSONDescriptor(), output: new JSONDescriptor() }, function json_none() {
  return null;
});
svc.api({ input: new File(), output: new File() }, function predict_file(f) {
  return f.bytes;
});
svc.api(
  { input: new File({ mime_type: 'application/pdf' }), output: new File({ mime_type: 'application/pdf' }) },
  function file_pdf(f) {
    return f.bytes;
  },
);
svc.api(
  {
    input: new Multipart({ a: new JSONDescriptor(), b: new Text(), c: new NumpyNdarray() }),
    output: new Multipart({ x: new JSONDescriptor(), y: new Text(), z: new NumpyNdarray() }),
  },
  function mp_mixed({ a, b, c }) {
    return { x: a, y: b, z: c };
  },
);

const BIN = new Uint8Array([0x81, 0x30, 0x89, 0x39]);

let server: Awaited<ReturnType<typeof start>>;
beforeAll(async () => {
  server = await start(svc);
});
afterAll(async () => {
  await server.close();
});

function post(
  path: string,
  body: string | Uint8Array | FormData,
  contentType: string | null = 'application/json',
) {
  const headers: Record<string, string> = contentType ? { 'content-type': contentType } : {};
  return fetch(server.url + path, { method: 'POST', body, headers });
}

/** A 4xx with the docs/spec/io-descriptors.md D4 JSON body; returns it. */
async function expectClientError(res: Response, status = 400): Promise<{ error: string; type: string }> {
  expect(res.status).toBe(status);
  expect(res.headers.get('content-type')).toBe('application/json');
  const body = (await res.json()) as { error: string; type: string };
  expect(typeof body.error).toBe('string');
  expect(typeof body.type).toBe('string');
  return body;
}

describe('NumpyNdarray over HTTP (cases 1-12)', () => {
  it('1: enforce_shape doubles a 2x2 array', async () => {
    const res = await post('/predict_ndarray_enforce_shape', '[[1, 2], [3, 4]]');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(await res.text()).toBe('[[2,4],[6,8]]');
  });

  it('2: multi output', async () => {
    expect(await (await post('/predict_ndarray_multi_output', '[[1, 2], [3, 4]]')).json()).toEqual([
      [2, 4],
      [6, 8],
    ]);
  });

  it('3: wrong shape is a 400 naming both shapes', async () => {
    const body = await expectClientError(await post('/predict_ndarray_enforce_shape', '[1, 2, 3, 4]'));
    expect(body.error).toContain('(2, 2)');
    expect(body.error).toContain('(4,)');
  });

  it('4: enforce_dtype uint8 in, str out', async () => {
    expect(await (await post('/predict_ndarray_enforce_dtype', '[[2, 1], [4, 3]]')).json()).toEqual([
      ['4', '2'],
      ['8', '6'],
    ]);
  });

  it('5: uncastable dtype is a 400', async () => {
    const body = await expectClientError(await post('/predict_ndarray_enforce_dtype', '[["2f", 1], [4, 3]]'));
    expect(body.error).toContain('uint8');
  });

  it('6: the request content type is ignored', async () => {
    const res = await post('/nd_echo', '[[1,2],[3,4]]', 'text/plain');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(await res.json()).toEqual([
      [1, 2],
      [3, 4],
    ]);
  });

  it('7, 8: unparseable JSON and ragged arrays are 400 (docs/spec/io-descriptors.md D1)', async () => {
    await expectClientError(await post('/nd_echo', 'not json'));
    await expectClientError(await post('/nd_echo', '[[1,2],[3]]'));
  });

  it('9: mixed strings and numbers become a str array', async () => {
    expect(await (await post('/nd_echo', '["é", 1.5]')).json()).toEqual(['é', '1.5']);
  });

  it('10: non-finite floats are read or refused, and written as null (docs/spec/io-descriptors.md D3)', async () => {
    const res = await post('/nd_echo', '[1.5, NaN, Infinity]');
    if (res.status === 200) expect(await res.json()).toEqual([1.5, null, null]);
    else await expectClientError(res);
  });

  it('11: float32 values keep their float32 precision', async () => {
    expect(await (await post('/nd_f32', '[0.1, 1, 2]')).json()).toEqual([0.10000000149011612, 1, 2]);
  });

  it('12: an output of the wrong shape is a 400', async () => {
    const body = await expectClientError(await post('/nd_out_enforce', '[1,2]'));
    expect(body.error).toContain('(3,)');
  });
});

describe('JSON over HTTP (cases 14-22)', () => {
  it('14: a JSON string', async () => {
    const res = await post('/echo_json', '"hi"');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-length')).toBe('4');
    expect(await res.text()).toBe('"hi"');
  });

  it('15: compact UTF-8 output', async () => {
    const res = await post('/echo_json', '{"a": 1, "b": [1, 2.50, "é"]}');
    const bytes = Buffer.from(await res.arrayBuffer());
    expect(bytes.toString('utf8')).toBe('{"a":1,"b":[1,2.5,"é"]}');
    expect(bytes.byteLength).toBe(24);
  });

  it('16: compact bodies come back byte-identical', async () => {
    for (const body of ['1', '2.2', '"str"', '[1,2,3]', '{"a":1,"b":2}']) {
      expect(await (await post('/echo_json', body)).text()).toBe(body);
    }
  });

  it('17: numbers keep their values (docs/spec/io-descriptors.md D3)', async () => {
    expect(Number(await (await post('/echo_json', '2.0')).text())).toBe(2);
    const big = await (await post('/echo_json', '12345678901234567890123')).text();
    expect(Number(big)).toBe(Number('12345678901234567890123'));
  });

  it('18: not JSON is a 400', async () => {
    const body = await expectClientError(await post('/echo_json', 'not json'));
    expect(body.error).toMatch(/JSON/);
  });

  it('19: NaN is refused or written as null, never a 5xx (docs/spec/io-descriptors.md D3)', async () => {
    const res = await post('/echo_json', '{"a": NaN}');
    if (res.status === 200) expect(await res.json()).toEqual({ a: null });
    else await expectClientError(res);
  });

  it('20, 21: a schema model validates the structure', async () => {
    const ok = await post(
      '/echo_json_enforce_structure',
      '{"name": "test", "endpoints": ["predict", "health"]}',
    );
    expect(await ok.text()).toBe('{"name":"test","endpoints":["predict","health"]}');
    const bad = await expectClientError(await post('/echo_json_enforce_structure', '{"name": "test"}'));
    expect(JSON.stringify(bad)).toContain('endpoints');
  });

  it('22: null output is an empty JSON response', async () => {
    const res = await post('/json_none', '1');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(res.headers.get('content-length')).toBe('0');
    expect(await res.text()).toBe('');
  });
});

describe('File over HTTP (cases 33-38)', () => {
  it('33: raw bytes in and out', async () => {
    const res = await post('/predict_file', BIN, 'application/octet-stream');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/octet-stream');
    expect(res.headers.get('content-length')).toBe('4');
    expect(new Uint8Array(await res.arrayBuffer())).toEqual(BIN);
  });

  it('34: a file part of a multipart form (built by FormData)', async () => {
    const form = new FormData();
    form.append('file', new Blob([BIN], { type: 'application/octet-stream' }), 'file.bin');
    const res = await fetch(`${server.url}/predict_file`, { method: 'POST', body: form });
    expect(res.status).toBe(200);
    expect(new Uint8Array(await res.arrayBuffer())).toEqual(BIN);
  });

  it('35: any content type is accepted by File()', async () => {
    const res = await post('/predict_file', BIN, 'application/pdf');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/octet-stream');
    expect(new Uint8Array(await res.arrayBuffer())).toEqual(BIN);
  });

  it('36, 37: a missing or mismatched content type is a 400 (docs/spec/io-descriptors.md D1)', async () => {
    await expectClientError(await post('/predict_file', BIN, null));
    await expectClientError(await post('/file_pdf', BIN, 'application/octet-stream'));
  });

  it('38: the declared MIME type is kept', async () => {
    const res = await post('/file_pdf', BIN, 'application/pdf');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/pdf');
    expect(new Uint8Array(await res.arrayBuffer())).toEqual(BIN);
  });
});

describe('Multipart over HTTP (cases 48-50)', () => {
  it('48: mixed parts in, multipart out', async () => {
    const form = new FormData();
    form.append('a', '{"k": [1, 2]}');
    form.append('b', 'hello é');
    form.append('c', '[[1,2],[3,4]]');
    const res = await fetch(`${server.url}/mp_mixed`, { method: 'POST', body: form });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^multipart\/form-data; boundary=[0-9a-f]{32}$/);
    const out = await res.formData();
    expect([...out.keys()]).toEqual(['x', 'y', 'z']);
    const text = async (name: string) => {
      const v = out.get(name)!;
      return typeof v === 'string' ? v : await v.text();
    };
    expect(JSON.parse(await text('x'))).toEqual({ k: [1, 2] });
    expect(await text('y')).toBe('hello é');
    expect(JSON.parse(await text('z'))).toEqual([
      [1, 2],
      [3, 4],
    ]);
  });

  it('49, 50: a non-multipart or garbage body is a 400 (docs/spec/io-descriptors.md D1)', async () => {
    await expectClientError(await post('/mp_mixed', '{}'));
    await expectClientError(await post('/mp_mixed', 'garbage', 'multipart/form-data; boundary=XyZ'));
  });

  it('a missing part is a 400 naming the expected parts (docs/spec/io-descriptors.md D12)', async () => {
    const form = new FormData();
    form.append('a', '{}');
    const body = await expectClientError(
      await fetch(`${server.url}/mp_mixed`, { method: 'POST', body: form }),
    );
    expect(body.error).toContain('b');
  });
});

describe('malformed requests are always 4xx with a JSON error, never 5xx (docs/spec/io-descriptors.md D1)', () => {
  const malformed: Array<[string, string | Uint8Array, string | null]> = [
    ['/nd_echo', '', 'application/json'],
    ['/nd_echo', '{"a":', 'application/json'],
    ['/nd_echo', new Uint8Array([0xff, 0xfe, 0x00]), 'application/json'],
    ['/predict_ndarray_enforce_dtype', '[["x"]]', 'application/json'],
    ['/echo_json', '', 'application/json'],
    ['/echo_json', '[1,', 'application/json'],
    ['/echo_json', new Uint8Array([0xc3, 0x28]), 'application/json'],
    ['/echo_json_enforce_structure', '[]', 'application/json'],
    ['/predict_file', BIN, null],
    ['/file_pdf', BIN, 'image/png'],
    ['/mp_mixed', '', 'multipart/form-data'],
    ['/mp_mixed', '--XyZ\r\nbroken', 'multipart/form-data; boundary=XyZ'],
    ['/predict_ndarray_enforce_shape', '[[1,2,3]]', 'application/json'],
  ];
  for (const [path, body, contentType] of malformed) {
    it(`${path} with ${contentType ?? 'no content type'} and ${String(body).slice(0, 16) || 'an empty body'}`, async () => {
      const res = await post(path, body, contentType);
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(res.status).toBeLessThan(500);
      expect(res.headers.get('content-type')).toBe('application/json');
      expect(await res.json()).toMatchObject({ error: expect.any(String), type: expect.any(String) });
    });
  }
});
