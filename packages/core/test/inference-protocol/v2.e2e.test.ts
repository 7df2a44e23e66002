import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  File,
  JSONDescriptor,
  NDArray,
  NumpyNdarray,
  type ServerHandle,
  Service,
  serve,
  silentLogger,
  Text,
} from '../../src/index.js';
import { PlainText } from '../server/helpers.js';
import { bytesElements, inferBinary, inferJson, le } from './v2-client.js';

const svc = new Service('v2-test', { version: '3.1.0' })
  .api(
    {
      name: 'double',
      input: new NumpyNdarray({ dtype: 'float32', shape: [-1, 2], enforce_shape: true }),
      output: new NumpyNdarray({ dtype: 'float32' }),
    },
    (x) => NDArray.from(Float32Array.from(x.data as Float32Array, (v) => v * 2)).reshape(x.shape),
  )
  .api({ name: 'count', input: new NumpyNdarray({ dtype: 'int64' }), output: new NumpyNdarray() }, (x) =>
    NDArray.from([x.size], 'int64'),
  )
  .api(
    {
      name: 'flags',
      input: new NumpyNdarray({ dtype: 'bool' }),
      output: new NumpyNdarray({ dtype: 'bool' }),
    },
    (x) =>
      NDArray.from(
        Array.from(x.data as Uint8Array, (v) => v === 0),
        'bool',
      ),
  )
  .api({ name: 'shout', input: new Text(), output: new Text() }, (t) => t.toUpperCase())
  .api({ name: 'keys', input: new JSONDescriptor(), output: new JSONDescriptor() }, (v) =>
    Object.keys(v as Record<string, unknown>),
  )
  // A user's descriptor with only an HTTP side: served by the base class's tensor form (its body as BYTES).
  .api({ name: 'plain', input: new PlainText(), output: new PlainText() }, (t) => `<${t}>`)
  // Bytes that need not be UTF-8 have no default tensor form: not a model.
  .api({ name: 'blob', input: new File(), output: new File() }, (f) => f.bytes);

let server: ServerHandle;
beforeAll(async () => {
  server = await serve(svc, { port: 0, host: '127.0.0.1', handleSignals: false, logger: silentLogger });
});
afterAll(() => server.close());

const url = (path: string) => `${server.url}${path}`;
const get = async (path: string) => {
  const res = await fetch(url(path));
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
};

describe('Open Inference Protocol: health and metadata', () => {
  it('answers live, ready, server metadata', async () => {
    expect(await get('/v2/health/live')).toEqual({ status: 200, body: { live: true } });
    expect(await get('/v2/health/ready')).toEqual({ status: 200, body: { ready: true } });
    expect(await get('/v2')).toEqual({
      status: 200,
      body: { name: 'v2-test', version: '3.1.0', extensions: ['binary_tensor_data'] },
    });
  });

  it('describes each tensor API as a model named after it', async () => {
    expect(await get('/v2/models/double')).toEqual({
      status: 200,
      body: {
        name: 'double',
        versions: [],
        platform: 'tiffin',
        inputs: [{ name: 'input', datatype: 'FP32', shape: [-1, 2] }],
        outputs: [{ name: 'output', datatype: 'FP32', shape: [-1] }],
      },
    });
    expect((await get('/v2/models/shout')).body).toMatchObject({
      inputs: [{ name: 'input', datatype: 'BYTES', shape: [1] }],
      outputs: [{ name: 'output', datatype: 'BYTES', shape: [1] }],
    });
    expect(await get('/v2/models/double/ready')).toEqual({
      status: 200,
      body: { name: 'double', ready: true },
    });
  });

  it('an unknown model is a 404 with an error body', async () => {
    const res = await get('/v2/models/nope');
    expect(res.status).toBe(404);
    expect(res.body.error).toEqual(expect.any(String));
    const infer = await inferJson(url('/v2/models/nope/infer'), { inputs: [] });
    expect(infer.status).toBe(404);
  });
});

describe('Open Inference Protocol: infer', () => {
  it('JSON form: flat or nested data, id echoed, outputs typed', async () => {
    const flat = await inferJson(url('/v2/models/double/infer'), {
      id: 'req-1',
      inputs: [{ name: 'input', shape: [2, 2], datatype: 'FP32', data: [1, 2, 3, 4.5] }],
    });
    expect(flat.status).toBe(200);
    expect(flat.json).toEqual({
      model_name: 'double',
      id: 'req-1',
      outputs: [{ name: 'output', datatype: 'FP32', shape: [2, 2], data: [2, 4, 6, 9] }],
    });
    const nested = await inferJson(url('/v2/models/double/infer'), {
      inputs: [{ name: 'x', shape: [1, 2], datatype: 'FP64', data: [[0.5, 1]] }],
    });
    expect(nested.json.outputs).toEqual([{ name: 'output', datatype: 'FP32', shape: [1, 2], data: [1, 2] }]);
  });

  it('binary form: request tensors and requested outputs as bytes', async () => {
    const x = new Float32Array([1, 2, 3, 4, 5, 6]);
    const res = await inferBinary(
      url('/v2/models/double/infer'),
      [{ name: 'input', shape: [3, 2], datatype: 'FP32', bytes: le(x) }],
      {
        outputs: [{ name: 'output', parameters: { binary_data: true } }],
      },
    );
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/octet-stream');
    expect(res.json.outputs).toEqual([
      { name: 'output', datatype: 'FP32', shape: [3, 2], parameters: { binary_data_size: 24 } },
    ]);
    const out = res.binary.get('output')!;
    expect(Array.from(new Float32Array(out.buffer, out.byteOffset, 6))).toEqual([2, 4, 6, 8, 10, 12]);
  });

  it('binary form for INT64, BOOL and BYTES; binary_data_output for every output', async () => {
    const ints = await inferBinary(
      url('/v2/models/count/infer'),
      [{ name: 'input', shape: [3], datatype: 'INT64', bytes: le(new BigInt64Array([1n, 2n, 3n])) }],
      { parameters: { binary_data_output: true } },
    );
    const out = ints.binary.get('output')!;
    expect(new BigInt64Array(out.buffer, out.byteOffset, 1)[0]).toBe(3n);
    const flags = await inferBinary(url('/v2/models/flags/infer'), [
      { name: 'input', shape: [3], datatype: 'BOOL', bytes: new Uint8Array([1, 0, 1]) },
    ]);
    expect(flags.json.outputs).toEqual([
      { name: 'output', datatype: 'BOOL', shape: [3], data: [false, true, false] },
    ]);
    const text = await inferBinary(url('/v2/models/shout/infer'), [
      { name: 'input', shape: [1], datatype: 'BYTES', bytes: bytesElements(['héllo']) },
    ]);
    expect(text.json.outputs).toEqual([{ name: 'output', datatype: 'BYTES', shape: [1], data: ['HÉLLO'] }]);
  });

  it('Text and JSON APIs take one BYTES element', async () => {
    const res = await inferJson(url('/v2/models/keys/infer'), {
      inputs: [{ name: 'input', shape: [1], datatype: 'BYTES', data: ['{"a":1,"b":2}'] }],
    });
    expect(res.json.outputs).toEqual([
      { name: 'output', datatype: 'BYTES', shape: [1], data: ['["a","b"]'] },
    ]);
  });

  it.each([
    ['not JSON', '{"inputs": ['],
    ['no inputs', '{}'],
    ['empty inputs', '{"inputs": []}'],
    ['bad datatype', '{"inputs":[{"name":"i","shape":[1],"datatype":"FP8","data":[1]}]}'],
    ['bad shape', '{"inputs":[{"name":"i","shape":[-1],"datatype":"FP32","data":[1]}]}'],
    ['count mismatch', '{"inputs":[{"name":"i","shape":[2,2],"datatype":"FP32","data":[1,2,3]}]}'],
    ['strings as FP32', '{"inputs":[{"name":"i","shape":[1,2],"datatype":"FP32","data":["a","b"]}]}'],
    [
      'two inputs',
      '{"inputs":[{"name":"a","shape":[1,2],"datatype":"FP32","data":[1,2]},{"name":"b","shape":[1,2],"datatype":"FP32","data":[1,2]}]}',
    ],
    [
      'unknown output',
      '{"inputs":[{"name":"i","shape":[1,2],"datatype":"FP32","data":[1,2]}],"outputs":[{"name":"zz"}]}',
    ],
    [
      'deep nesting',
      `{"inputs":[{"name":"i","shape":[1],"datatype":"FP32","data":${'['.repeat(200)}1${']'.repeat(200)}}]}`,
    ],
    ['wrong shape for the API', '{"inputs":[{"name":"i","shape":[3],"datatype":"FP32","data":[1,2,3]}]}'],
  ])('a malformed request (%s) is a 400 with an error body', async (_what, body) => {
    const res = await fetch(url('/v2/models/double/infer'), {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json' },
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: unknown }).error).toEqual(expect.any(String));
  });

  it('malformed binary bodies are 400s', async () => {
    const header = (size: number) =>
      JSON.stringify({
        inputs: [{ name: 'i', shape: [2], datatype: 'FP32', parameters: { binary_data_size: size } }],
      });
    const post = (body: Uint8Array | string, length: string) =>
      fetch(url('/v2/models/double/infer'), {
        method: 'POST',
        body,
        headers: { 'inference-header-content-length': length },
      });
    const h = header(8);
    const cases: Array<[Uint8Array | string, string]> = [
      [h + 'xxxx', String(h.length)], // too few bytes for the declared size
      [h + 'x'.repeat(12), String(h.length)], // bytes left over
      [h + 'x'.repeat(8), '99999'], // header length past the body
      [h + 'x'.repeat(8), 'abc'],
      [header(4) + 'xxxx', String(header(4).length)], // size disagrees with the shape
    ];
    for (const [body, length] of cases) expect((await post(body, length)).status).toBe(400);
    const bad = bytesElements(['ok']).slice(0, 5);
    const bytesHeader = JSON.stringify({
      inputs: [{ name: 'i', shape: [1], datatype: 'BYTES', parameters: { binary_data_size: 5 } }],
    });
    const res = await fetch(url('/v2/models/shout/infer'), {
      method: 'POST',
      body: Buffer.concat([Buffer.from(bytesHeader), bad]),
      headers: { 'inference-header-content-length': String(bytesHeader.length) },
    });
    expect(res.status).toBe(400);
  });

  it('a descriptor with only an HTTP side is a model by the default tensor form; one that has none is not', async () => {
    expect((await get('/v2/models/plain')).body).toMatchObject({
      inputs: [{ name: 'input', datatype: 'BYTES', shape: [1] }],
      outputs: [{ name: 'output', datatype: 'BYTES', shape: [1] }],
    });
    const ok = await inferJson(url('/v2/models/plain/infer'), {
      inputs: [{ name: 'input', shape: [1], datatype: 'BYTES', data: ['héllo'] }],
    });
    expect(ok.json.outputs).toEqual([{ name: 'output', datatype: 'BYTES', shape: [1], data: ['<héllo>'] }]);
    for (const inputs of [
      [{ name: 'input', shape: [2], datatype: 'BYTES', data: ['a', 'b'] }],
      [{ name: 'input', shape: [1], datatype: 'FP32', data: [1] }],
    ]) {
      const bad = await inferJson(url('/v2/models/plain/infer'), { inputs });
      expect(bad.status).toBe(400);
      expect(bad.json.code).toBe('BAD_INPUT');
    }
    expect((await fetch(url('/v2/models/blob'))).status).toBe(404);
  });

  it('can be turned off', async () => {
    const off = await serve(svc, {
      port: 0,
      host: '127.0.0.1',
      handleSignals: false,
      logger: silentLogger,
      inferenceProtocol: false,
    });
    try {
      expect((await fetch(`${off.url}/v2/health/live`)).status).toBe(404);
    } finally {
      await off.close();
    }
  });
});
