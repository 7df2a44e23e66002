import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BadInput,
  type GrpcServerHandle,
  JSONDescriptor,
  NDArray,
  NumpyNdarray,
  type ServerHandle,
  Service,
  serve,
  serveGrpc,
  silentLogger,
  Text,
} from '../../src/index.js';
import { GrpcStatus } from '../../src/internal.js';
import { type HealthStatus, healthClient } from '../grpc/health-client.js';
import { inferJson } from './v2-client.js';
import {
  type Contents,
  type InferOutput,
  type InferRequest,
  le,
  rawBytesElements,
  V2GrpcClient,
} from './v2-grpc-client.js';

const batches: number[] = [];
/** Holds the first batch until the test opens it, so the next calls queue up behind it. */
let holdFirstBatch: Promise<void> = Promise.resolve();
const svc = new Service('v2-grpc-test', { version: '2.0.1' })
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
  .api({ name: 'echo', input: new NumpyNdarray(), output: new NumpyNdarray() }, (x) => x)
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
  .api({ name: 'fails', input: new Text(), output: new Text() }, (t) => {
    if (t === 'bad') throw new BadInput('not that one');
    throw new Error('secret internal detail');
  })
  .api({ name: 'slow', input: new Text(), output: new Text(), timeout: 0.2 }, async (t) => {
    await new Promise((resolve) => setTimeout(resolve, 1500));
    return t;
  })
  .api(
    {
      name: 'rows',
      input: new NumpyNdarray({ dtype: 'float64' }),
      output: new NumpyNdarray({ dtype: 'float64' }),
      batchable: true,
      max_batch_size: 3,
      max_latency_ms: 5000,
    },
    async (x) => {
      batches.push(x.shape[0]!);
      if (batches.length === 1) await holdFirstBatch;
      return NDArray.from(Float64Array.from(x.data as Float64Array, (v) => v + 1)).reshape(x.shape);
    },
  );

let modelDown = false;
svc.addReadinessCheck(() => (modelDown ? 'the model is down' : true));

let http: ServerHandle;
let rpc: GrpcServerHandle;
let client: V2GrpcClient;
const logged: Array<Record<string, unknown>> = [];

beforeAll(async () => {
  // As `tiffin serve --grpc` runs them: gRPC calls go through the HTTP server's runtime.
  http = await serve(svc, { port: 0, host: '127.0.0.1', handleSignals: false, logger: silentLogger });
  rpc = await serveGrpc(svc, {
    port: 0,
    runtime: http.app.runtime,
    runStartupHooks: false,
    metricsRegistry: http.app.metrics.registry,
    log: (entry) => logged.push(entry),
  });
  client = new V2GrpcClient(rpc.address);
});

afterAll(async () => {
  client.close();
  await rpc.close();
  await http.close();
});

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 2));
}

const f32 = (bytes: Uint8Array) =>
  Array.from(
    new Float32Array(Buffer.from(bytes).buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength)),
  );

/** The elements of an output, from its typed contents or its raw bytes. */
function elements(output: InferOutput, raw?: Buffer): unknown[] {
  if (raw) {
    const copy = Uint8Array.from(raw);
    switch (output.datatype) {
      case 'FP32':
        return Array.from(new Float32Array(copy.buffer));
      case 'FP64':
        return Array.from(new Float64Array(copy.buffer));
      case 'INT64':
        return Array.from(new BigInt64Array(copy.buffer), Number);
      case 'BOOL':
        return Array.from(copy, (v) => v !== 0);
      default:
        throw new Error(`no raw reader for ${output.datatype}`);
    }
  }
  const c = output.contents as Required<Contents>;
  switch (output.datatype) {
    case 'FP32':
      return c.fp32_contents;
    case 'FP64':
      return c.fp64_contents;
    case 'INT64':
      return c.int64_contents.map(Number);
    case 'BOOL':
      return c.bool_contents;
    case 'BYTES':
      return c.bytes_contents.map((b) => Buffer.from(b).toString('utf8'));
    default:
      throw new Error(`no reader for ${output.datatype}`);
  }
}

describe('inference.GRPCInferenceService: health and metadata', () => {
  it('answers ServerLive, ServerReady and ServerMetadata', async () => {
    expect(await client.call('ServerLive', {})).toEqual({ live: true });
    expect(await client.call('ServerReady', {})).toEqual({ ready: true });
    expect(await client.call('ServerMetadata', {})).toEqual({
      name: 'v2-grpc-test',
      version: '2.0.1',
      extensions: [],
    });
  });

  it("ServerReady and ModelReady follow the service's readiness checks, as /v2/health/ready does", async () => {
    modelDown = true;
    try {
      expect(await client.call('ServerReady', {})).toEqual({ ready: false });
      expect(await client.call('ModelReady', { name: 'double' })).toEqual({ ready: false });
      expect((await fetch(`${http.url}/v2/health/ready`)).status).toBe(503);
    } finally {
      modelDown = false;
    }
    expect(await client.call('ServerReady', {})).toEqual({ ready: true });
  });

  it('grpc.health.v1 Check, Watch and List follow the readiness checks too (Kubernetes gRPC probes)', async () => {
    type Status = HealthStatus;
    const health = healthClient(rpc.address);
    const check = (service: string) =>
      new Promise<string>((resolve, reject) =>
        health.Check({ service }, (err, r) => (err ? reject(err) : resolve(r.status))),
      );
    const watch = health.Watch({ service: '' });
    const seen: string[] = [];
    const next = () =>
      new Promise<void>((resolve) => {
        const n = seen.length;
        const poll = setInterval(() => {
          if (seen.length > n) {
            clearInterval(poll);
            resolve();
          }
        }, 20);
      });
    watch.on('data', (m: Status) => seen.push(m.status));
    watch.on('error', () => {});
    try {
      await next();
      expect(seen).toEqual(['SERVING']);
      expect(await check('')).toBe('SERVING');
      expect(await check('inference.GRPCInferenceService')).toBe('SERVING');
      modelDown = true;
      try {
        expect(await check('')).toBe('NOT_SERVING');
        expect(await check('inference.GRPCInferenceService')).toBe('NOT_SERVING');
        const listed = await new Promise<Record<string, Status>>((resolve, reject) =>
          health.List({}, (err, r) => (err ? reject(err) : resolve(r.statuses))),
        );
        expect(listed['']).toEqual({ status: 'NOT_SERVING' });
        await next();
        expect(seen).toEqual(['SERVING', 'NOT_SERVING']);
      } finally {
        modelDown = false;
      }
      await next();
      expect(seen).toEqual(['SERVING', 'NOT_SERVING', 'SERVING']);
      const unknown = await check('no.such.Service').catch((err: grpc.ServiceError) => err);
      expect((unknown as grpc.ServiceError).code).toBe(GrpcStatus.NOT_FOUND);
    } finally {
      watch.cancel();
      health.close();
    }
  });

  it('describes each tensor API as a model, the same as GET /v2/models/{name}', async () => {
    const meta = await client.call<Record<string, unknown>>('ModelMetadata', { name: 'double' });
    expect(meta).toEqual({
      name: 'double',
      versions: [],
      platform: 'tiffin',
      inputs: [{ name: 'input', datatype: 'FP32', shape: ['-1', '2'] }],
      outputs: [{ name: 'output', datatype: 'FP32', shape: ['-1'] }],
    });
    for (const name of ['double', 'shout', 'keys', 'count']) {
      const viaHttp = (await (await fetch(`${http.url}/v2/models/${name}`)).json()) as Record<
        string,
        unknown
      >;
      type Tensors = Array<{ shape: string[] }>;
      const viaGrpc = await client.call<{ inputs: Tensors; outputs: Tensors }>('ModelMetadata', { name });
      const numeric = (tensors: Tensors) => tensors.map((t) => ({ ...t, shape: t.shape.map(Number) }));
      expect({
        ...viaGrpc,
        inputs: numeric(viaGrpc.inputs),
        outputs: numeric(viaGrpc.outputs),
      }).toEqual(viaHttp);
    }
    expect(await client.call('ModelReady', { name: 'shout' })).toEqual({ ready: true });
  });

  it('an unknown model, or a version (Tiffin models have none), is NOT_FOUND', async () => {
    expect((await client.error('ModelReady', { name: 'nope' })).code).toBe(GrpcStatus.NOT_FOUND);
    expect((await client.error('ModelMetadata', { name: '' })).code).toBe(GrpcStatus.NOT_FOUND);
    expect((await client.error('ModelMetadata', { name: 'double', version: '7' })).code).toBe(
      GrpcStatus.NOT_FOUND,
    );
    const infer = await client.error('ModelInfer', {
      model_name: 'nope',
      inputs: [{ name: 'x', datatype: 'FP32', shape: [1], contents: { fp32_contents: [1] } }],
    });
    expect(infer.code).toBe(GrpcStatus.NOT_FOUND);
    expect(infer.details).toContain("'nope'");
  });
});

describe('inference.GRPCInferenceService: ModelInfer', () => {
  it('typed contents in and out; id echoed', async () => {
    const res = await client.infer({
      model_name: 'double',
      id: 'req-7',
      inputs: [
        { name: 'input', datatype: 'FP32', shape: [2, 2], contents: { fp32_contents: [1, 2, 3, 4.5] } },
      ],
    });
    expect(res.model_name).toBe('double');
    expect(res.id).toBe('req-7');
    expect(res.raw_output_contents).toEqual([]);
    expect(res.outputs).toHaveLength(1);
    expect(res.outputs[0]).toMatchObject({ name: 'output', datatype: 'FP32', shape: ['2', '2'] });
    expect(res.outputs[0]!.contents!.fp32_contents).toEqual([2, 4, 6, 9]);
  });

  it('raw_input_contents in, raw_output_contents out', async () => {
    const res = await client.infer({
      model_name: 'double',
      inputs: [{ name: 'input', datatype: 'FP32', shape: [3, 2] }],
      raw_input_contents: [le(new Float32Array([1, 2, 3, 4, 5, 6]))],
    });
    expect(res.outputs[0]).toMatchObject({
      name: 'output',
      datatype: 'FP32',
      shape: ['3', '2'],
      contents: null,
    });
    expect(res.raw_output_contents).toHaveLength(1);
    expect(f32(res.raw_output_contents[0]!)).toEqual([2, 4, 6, 8, 10, 12]);
  });

  it('binary_data_output asks for raw outputs with typed inputs', async () => {
    const res = await client.infer({
      model_name: 'double',
      parameters: { binary_data_output: { bool_param: true } },
      inputs: [{ name: 'input', datatype: 'FP32', shape: [1, 2], contents: { fp32_contents: [1, 2] } }],
    });
    expect(f32(res.raw_output_contents[0]!)).toEqual([2, 4]);
  });

  it('INT64 (exact, as decimal strings), UINT8, BOOL and FP64 contents', async () => {
    const big = await client.infer({
      model_name: 'echo',
      inputs: [
        {
          name: 'input',
          datatype: 'INT64',
          shape: [2],
          contents: { int64_contents: ['9007199254740993', '-5'] },
        },
      ],
    });
    expect(big.outputs[0]!.datatype).toBe('INT64');
    expect(big.outputs[0]!.contents!.int64_contents).toEqual(['9007199254740993', '-5']);
    const bytes = await client.infer({
      model_name: 'echo',
      inputs: [{ name: 'input', datatype: 'UINT8', shape: [3], contents: { uint_contents: [0, 7, 255] } }],
    });
    expect(bytes.outputs[0]).toMatchObject({ datatype: 'UINT8', shape: ['3'] });
    expect(bytes.outputs[0]!.contents!.uint_contents).toEqual([0, 7, 255]);
    const count = await client.infer({
      model_name: 'count',
      inputs: [{ name: 'input', datatype: 'INT64', shape: [3], contents: { int64_contents: [1, 2, 3] } }],
    });
    expect(count.outputs[0]!.contents!.int64_contents).toEqual(['3']);
    const flags = await client.infer({
      model_name: 'flags',
      inputs: [
        { name: 'input', datatype: 'BOOL', shape: [3], contents: { bool_contents: [true, false, true] } },
      ],
    });
    expect(flags.outputs[0]!.contents!.bool_contents).toEqual([false, true, false]);
    const doubles = await client.infer({
      model_name: 'echo',
      inputs: [{ name: 'input', datatype: 'FP64', shape: [1], contents: { fp64_contents: [0.1] } }],
    });
    expect(doubles.outputs[0]!.contents!.fp64_contents).toEqual([0.1]);
  });

  it('FP16 travels raw only, both ways', async () => {
    // 1.5 and -2 as IEEE half floats.
    const halves = Buffer.from([0x00, 0x3e, 0x00, 0xc0]);
    const res = await client.infer({
      model_name: 'echo',
      inputs: [{ name: 'input', datatype: 'FP16', shape: [2] }],
      raw_input_contents: [halves],
    });
    expect(res.outputs[0]!.datatype).toBe('FP16');
    expect(Buffer.from(res.raw_output_contents[0]!)).toEqual(halves);
    const typed = await client.error('ModelInfer', {
      model_name: 'echo',
      inputs: [{ name: 'input', datatype: 'FP16', shape: [1], contents: { fp32_contents: [1] } }],
    });
    expect(typed.code).toBe(GrpcStatus.INVALID_ARGUMENT);
    expect(typed.details).toMatch(/raw_input_contents/);
  });

  it('Text and JSON APIs take one BYTES element, typed or raw', async () => {
    const text = await client.infer({
      model_name: 'shout',
      inputs: [
        {
          name: 'input',
          datatype: 'BYTES',
          shape: [1],
          contents: { bytes_contents: [Buffer.from('héllo')] },
        },
      ],
    });
    expect(text.outputs[0]).toMatchObject({ name: 'output', datatype: 'BYTES', shape: ['1'] });
    expect(elements(text.outputs[0]!)).toEqual(['HÉLLO']);
    const raw = await client.infer({
      model_name: 'shout',
      inputs: [{ name: 'input', datatype: 'BYTES', shape: [1] }],
      raw_input_contents: [rawBytesElements(['ünï'])],
    });
    expect(Buffer.from(raw.raw_output_contents[0]!)).toEqual(rawBytesElements(['ÜNÏ']));
    const json = await client.infer({
      model_name: 'keys',
      inputs: [
        {
          name: 'input',
          datatype: 'BYTES',
          shape: [1],
          contents: { bytes_contents: [Buffer.from('{"a":1,"b":2}')] },
        },
      ],
    });
    expect(elements(json.outputs[0]!)).toEqual(['["a","b"]']);
  });

  it('requested outputs: a known name is returned, an unknown one is INVALID_ARGUMENT', async () => {
    const input = { name: 'input', datatype: 'FP32', shape: [1, 2], contents: { fp32_contents: [1, 2] } };
    const ok = await client.infer({ model_name: 'double', inputs: [input], outputs: [{ name: 'output' }] });
    expect(ok.outputs.map((o) => o.name)).toEqual(['output']);
    const bad = await client.error('ModelInfer', {
      model_name: 'double',
      inputs: [input],
      outputs: [{ name: 'zz' }],
    });
    expect(bad.code).toBe(GrpcStatus.INVALID_ARGUMENT);
  });

  it('the results equal POST /v2/models/{name}/infer for the same input', async () => {
    const cases: Array<{ grpc: InferRequest; json: Record<string, unknown> }> = [
      {
        grpc: {
          model_name: 'double',
          inputs: [
            {
              name: 'input',
              datatype: 'FP32',
              shape: [2, 2],
              contents: { fp32_contents: [0.5, -1, 3.25, 1e6] },
            },
          ],
        },
        json: { inputs: [{ name: 'input', datatype: 'FP32', shape: [2, 2], data: [0.5, -1, 3.25, 1e6] }] },
      },
      {
        grpc: {
          model_name: 'count',
          inputs: [
            { name: 'input', datatype: 'INT64', shape: [2, 2], contents: { int64_contents: [1, 2, 3, 4] } },
          ],
        },
        json: { inputs: [{ name: 'input', datatype: 'INT64', shape: [2, 2], data: [1, 2, 3, 4] }] },
      },
      {
        grpc: {
          model_name: 'flags',
          inputs: [
            { name: 'input', datatype: 'BOOL', shape: [2], contents: { bool_contents: [true, false] } },
          ],
        },
        json: { inputs: [{ name: 'input', datatype: 'BOOL', shape: [2], data: [true, false] }] },
      },
      {
        grpc: {
          model_name: 'shout',
          inputs: [
            {
              name: 'input',
              datatype: 'BYTES',
              shape: [1],
              contents: { bytes_contents: [Buffer.from('ça va')] },
            },
          ],
        },
        json: { inputs: [{ name: 'input', datatype: 'BYTES', shape: [1], data: ['ça va'] }] },
      },
      {
        grpc: {
          model_name: 'keys',
          inputs: [
            {
              name: 'input',
              datatype: 'BYTES',
              shape: [1],
              contents: { bytes_contents: [Buffer.from('{"z":null}')] },
            },
          ],
        },
        json: { inputs: [{ name: 'input', datatype: 'BYTES', shape: [1], data: ['{"z":null}'] }] },
      },
    ];
    for (const { grpc: request, json } of cases) {
      const viaHttp = await inferJson(`${http.url}/v2/models/${request.model_name}/infer`, json);
      expect(viaHttp.status).toBe(200);
      const viaGrpc = await client.infer(request);
      const asJson = viaGrpc.outputs.map((o) => ({
        name: o.name,
        datatype: o.datatype,
        shape: o.shape.map(Number),
        data: elements(o),
      }));
      expect(asJson).toEqual(viaHttp.json.outputs);
      // The raw form carries the same elements.
      if (request.model_name === 'double') {
        const raw = await client.infer({
          ...request,
          parameters: { binary_data_output: { bool_param: true } },
        });
        expect(elements(raw.outputs[0]!, raw.raw_output_contents[0])).toEqual(
          (viaHttp.json.outputs as Array<{ data: unknown }>)[0]!.data,
        );
      }
    }
  });

  it('a batchable API batches ModelInfer calls through the runtime', async () => {
    batches.length = 0;
    let open = () => {};
    holdFirstBatch = new Promise((resolve) => {
      open = resolve;
    });
    const one = (v: number) =>
      client.infer({
        model_name: 'rows',
        inputs: [{ name: 'input', datatype: 'FP64', shape: [1], contents: { fp64_contents: [v] } }],
      });
    const first = one(1);
    await until(() => batches.length === 1);
    const rest = [one(10), one(100)];
    await until(() => http.app.runtime.batcher('rows')!.depth === 2);
    open();
    const results = await Promise.all([first, ...rest]);
    expect(results.map((r) => r.outputs[0]!.contents!.fp64_contents)).toEqual([[2], [11], [101]]);
    expect(batches).toEqual([1, 2]);
  });
});

describe('inference.GRPCInferenceService: errors', () => {
  const fp32 = (shape: Array<number | string>, values: number[]) => ({
    model_name: 'double',
    inputs: [{ name: 'input', datatype: 'FP32', shape, contents: { fp32_contents: values } }],
  });

  it.each<[string, unknown]>([
    ['no inputs', { model_name: 'double', inputs: [] }],
    ['unknown datatype', { model_name: 'double', inputs: [{ name: 'i', datatype: 'FP8', shape: [1, 2] }] }],
    ['empty datatype', { model_name: 'double', inputs: [{ name: 'i', shape: [1, 2] }] }],
    [
      'empty name',
      {
        model_name: 'double',
        inputs: [{ name: '', datatype: 'FP32', shape: [1, 2], contents: { fp32_contents: [1, 2] } }],
      },
    ],
    [
      'elements in the wrong field',
      {
        model_name: 'double',
        inputs: [{ name: 'i', datatype: 'FP32', shape: [1, 2], contents: { int_contents: [1, 2] } }],
      },
    ],
    [
      'elements in two fields',
      {
        model_name: 'double',
        inputs: [
          {
            name: 'i',
            datatype: 'FP32',
            shape: [1, 2],
            contents: { fp32_contents: [1, 2], fp64_contents: [1] },
          },
        ],
      },
    ],
    ['no elements', { model_name: 'double', inputs: [{ name: 'i', datatype: 'FP32', shape: [1, 2] }] }],
    ['too few elements for the shape', fp32([2, 2], [1, 2, 3])],
    ['too many elements for the shape', fp32([1, 2], [1, 2, 3])],
    ['a negative dimension', fp32([-1, 2], [1, 2])],
    ['a huge shape', fp32(['4294967296', '4294967296'], [1, 2])],
    ['a dimension past 2^53', fp32(['9223372036854775807'], [1])],
    ['too many dimensions', fp32(Array(40).fill(1), [1])],
    ['the wrong shape for the API', fp32([3], [1, 2, 3])],
    [
      'INT8 out of range',
      {
        model_name: 'echo',
        inputs: [{ name: 'i', datatype: 'INT8', shape: [1], contents: { int_contents: [300] } }],
      },
    ],
    [
      'BYTES not UTF-8',
      {
        model_name: 'shout',
        inputs: [
          {
            name: 'i',
            datatype: 'BYTES',
            shape: [1],
            contents: { bytes_contents: [Buffer.from([0xc3, 0x28])] },
          },
        ],
      },
    ],
    [
      'two BYTES elements for a Text API',
      {
        model_name: 'shout',
        inputs: [
          {
            name: 'i',
            datatype: 'BYTES',
            shape: [2],
            contents: { bytes_contents: [Buffer.from('a'), Buffer.from('b')] },
          },
        ],
      },
    ],
    [
      'numbers for a Text API',
      {
        model_name: 'shout',
        inputs: [{ name: 'i', datatype: 'FP32', shape: [1], contents: { fp32_contents: [1] } }],
      },
    ],
    [
      'not JSON for a JSON API',
      {
        model_name: 'keys',
        inputs: [
          { name: 'i', datatype: 'BYTES', shape: [1], contents: { bytes_contents: [Buffer.from('{"a":')] } },
        ],
      },
    ],
    [
      'two inputs for one tensor',
      {
        model_name: 'double',
        inputs: [
          { name: 'a', datatype: 'FP32', shape: [1, 2], contents: { fp32_contents: [1, 2] } },
          { name: 'b', datatype: 'FP32', shape: [1, 2], contents: { fp32_contents: [1, 2] } },
        ],
      },
    ],
    [
      'one name twice',
      {
        model_name: 'double',
        inputs: [
          { name: 'a', datatype: 'FP32', shape: [1, 2], contents: { fp32_contents: [1, 2] } },
          { name: 'a', datatype: 'FP32', shape: [1, 2], contents: { fp32_contents: [1, 2] } },
        ],
      },
    ],
    ['a parameter without a value', { ...fp32([1, 2], [1, 2]), parameters: { x: {} } }],
    ['a requested output without a name', { ...fp32([1, 2], [1, 2]), outputs: [{ name: '' }] }],
    [
      'raw contents of the wrong byte length',
      {
        model_name: 'double',
        inputs: [{ name: 'i', datatype: 'FP32', shape: [1, 2] }],
        raw_input_contents: [Buffer.alloc(7)],
      },
    ],
    [
      'raw contents for a huge shape',
      {
        model_name: 'double',
        inputs: [{ name: 'i', datatype: 'FP32', shape: ['1000000000', '2'] }],
        raw_input_contents: [Buffer.alloc(8)],
      },
    ],
    [
      'fewer raw contents than inputs',
      {
        model_name: 'double',
        inputs: [
          { name: 'a', datatype: 'FP32', shape: [1, 2] },
          { name: 'b', datatype: 'FP32', shape: [1, 2] },
        ],
        raw_input_contents: [Buffer.alloc(8)],
      },
    ],
    [
      'raw contents and typed contents',
      {
        model_name: 'double',
        inputs: [{ name: 'i', datatype: 'FP32', shape: [1, 2], contents: { fp32_contents: [1, 2] } }],
        raw_input_contents: [Buffer.alloc(8)],
      },
    ],
    [
      'raw BYTES with a truncated length prefix',
      {
        model_name: 'shout',
        inputs: [{ name: 'i', datatype: 'BYTES', shape: [1] }],
        raw_input_contents: [Buffer.from([5, 0])],
      },
    ],
    [
      'raw BYTES element past its data',
      {
        model_name: 'shout',
        inputs: [{ name: 'i', datatype: 'BYTES', shape: [1] }],
        raw_input_contents: [rawBytesElements(['hello']).subarray(0, 6)],
      },
    ],
  ])('%s is INVALID_ARGUMENT with a message', async (_what, request) => {
    const err = await client.error('ModelInfer', request);
    expect(err.code).toBe(GrpcStatus.INVALID_ARGUMENT);
    expect(err.details.length).toBeGreaterThan(0);
  });

  it('bytes that are not a message are INVALID_ARGUMENT on every method', async () => {
    const garbage = Buffer.from([0xff, 0xff, 0xff, 0xff, 0x0f, 0x00, 0x9a]);
    for (const method of ['ModelInfer', 'ModelMetadata', 'ModelReady']) {
      const err = await client.raw(method, garbage);
      expect(err?.code, method).toBe(GrpcStatus.INVALID_ARGUMENT);
    }
    // A length-delimited field that overruns the message.
    const err = await client.raw('ModelInfer', Buffer.from([0x2a, 0x7f, 0x01]));
    expect(err?.code).toBe(GrpcStatus.INVALID_ARGUMENT);
  });

  it("an API's own error keeps its status; an unexpected one is INTERNAL without its details", async () => {
    const text = (t: string): InferRequest => ({
      model_name: 'fails',
      inputs: [
        { name: 'input', datatype: 'BYTES', shape: [1], contents: { bytes_contents: [Buffer.from(t)] } },
      ],
    });
    const bad = await client.error('ModelInfer', text('bad'));
    expect(bad.code).toBe(GrpcStatus.INVALID_ARGUMENT);
    expect(bad.details).toBe('not that one');
    const boom = await client.error('ModelInfer', text('boom'));
    expect(boom.code).toBe(GrpcStatus.INTERNAL);
    expect(boom.details).not.toContain('secret');
    expect(JSON.stringify(logged)).toContain('secret internal detail');
  });

  it("the API's timeout applies: DEADLINE_EXCEEDED", async () => {
    const err = await client.error('ModelInfer', {
      model_name: 'slow',
      inputs: [
        { name: 'input', datatype: 'BYTES', shape: [1], contents: { bytes_contents: [Buffer.from('x')] } },
      ],
    });
    expect(err.code).toBe(GrpcStatus.DEADLINE_EXCEEDED);
  });
});

describe('inference.GRPCInferenceService: token auth and switching off', () => {
  it('needs the bearer token except for ServerLive/ServerReady; a wrong one is UNAUTHENTICATED', async () => {
    const guarded = await serveGrpc(svc, { port: 0, apiToken: 'v2-s3cret', log: () => undefined });
    const anonymous = new V2GrpcClient(guarded.address);
    try {
      const request: InferRequest = {
        model_name: 'shout',
        inputs: [
          { name: 'input', datatype: 'BYTES', shape: [1], contents: { bytes_contents: [Buffer.from('a')] } },
        ],
      };
      expect((await anonymous.error('ModelInfer', request)).code).toBe(GrpcStatus.UNAUTHENTICATED);
      expect((await anonymous.error('ModelInfer', request, 'wrong')).code).toBe(GrpcStatus.UNAUTHENTICATED);
      expect((await anonymous.error('ModelMetadata', { name: 'shout' })).code).toBe(
        GrpcStatus.UNAUTHENTICATED,
      );
      expect((await anonymous.error('ServerMetadata', {})).code).toBe(GrpcStatus.UNAUTHENTICATED);
      expect(await anonymous.call('ServerLive', {})).toEqual({ live: true });
      expect(await anonymous.call('ServerReady', {})).toEqual({ ready: true });
      const res = await anonymous.infer(request, 'v2-s3cret');
      expect(elements(res.outputs[0]!)).toEqual(['A']);
    } finally {
      anonymous.close();
      await guarded.close();
    }
  });

  it('inferenceProtocol: false leaves the service out (UNIMPLEMENTED)', async () => {
    const off = await serveGrpc(svc, { port: 0, inferenceProtocol: false, log: () => undefined });
    const c = new V2GrpcClient(off.address);
    try {
      expect((await c.error('ServerLive', {})).code).toBe(grpc.status.UNIMPLEMENTED);
    } finally {
      c.close();
      await off.close();
    }
  });
});
