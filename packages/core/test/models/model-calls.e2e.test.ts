import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LoadedModel, modelService, NDArray, serveGrpc } from '../../src/index.js';
import type { ModelSignature } from '../../src/internal.js';
import type { NamedTensors } from '../../src/signature/named-tensors.js';
import { inferBinary, inferJson, le } from '../inference-protocol/v2-client.js';
import { V2GrpcClient } from '../inference-protocol/v2-grpc-client.js';
import { start } from '../server/helpers.js';

/**
 * A model as users call it, over every transport of the zero-code service: /predict JSON, v2 JSON, v2 binary and
 * v2 gRPC. The models compute in this thread (what they compute is not the point: the service's checks are).
 */
function model(name: string, signature: ModelSignature, fn: (x: NamedTensors) => NamedTensors): LoadedModel {
  return {
    name,
    tag: undefined,
    module: 'test',
    classes: undefined,
    metadata: {},
    instances: 1,
    signature,
    run: async (x) => fn(x),
    close: async () => {},
  };
}

/** ids (int32, [-1, 2]) → ids + 1 (int32): one input, one output, under a name with a '-' and a '.'. */
const ids = model(
  'ch_PP-OCRv4.det',
  {
    inputs: [{ name: 'ids', dtype: 'int32', shape: [-1, 2] }],
    outputs: [{ name: 'next', dtype: 'int32', shape: [-1, 2] }],
    batchable: true,
    batch_dim: 0,
  },
  (x) => ({
    next: new NDArray(
      (x.ids!.data as Int32Array).map((v) => v + 1),
      x.ids!.shape,
      'int32',
    ),
  }),
);

/** x (float32, [-1]) and a scalar rate sr (int64, rank 0) → y = x * sr: the VAD's shape of inputs. */
const scaled = model(
  'scaled',
  {
    inputs: [
      { name: 'x', dtype: 'float32', shape: [-1] },
      { name: 'sr', dtype: 'int64', shape: [] },
    ],
    outputs: [{ name: 'y', dtype: 'float32', shape: [-1] }],
    batchable: false,
    batch_dim: 0,
  },
  (x) => {
    if (x.sr!.shape.length !== 0) throw new Error('sr must reach the model as a scalar');
    const sr = Number((x.sr!.data as BigInt64Array)[0]);
    return {
      y: new NDArray(
        (x.x!.data as Float32Array).map((v) => v * sr),
        x.x!.shape,
        'float32',
      ),
    };
  },
);

type Started = Awaited<ReturnType<typeof start>>;
const servers: Started[] = [];
const rpcs: Array<{ close(): Promise<void> }> = [];
const clients: V2GrpcClient[] = [];

async function serveModel(m: LoadedModel, batching = true, options?: Parameters<typeof start>[1]) {
  const svc = modelService(m, { batching: batching ? { max_batch_size: 4 } : false });
  const http = await start(svc, options);
  servers.push(http);
  const rpc = await serveGrpc(svc, {
    port: 0,
    runtime: http.app.runtime,
    runStartupHooks: false,
    log: () => {},
  });
  rpcs.push(rpc);
  const grpc = new V2GrpcClient(rpc.address);
  clients.push(grpc);
  return { url: http.url, grpc };
}

let idsServer: Awaited<ReturnType<typeof serveModel>>;
let scaledServer: Awaited<ReturnType<typeof serveModel>>;
const V2_IDS = `/v2/models/${encodeURIComponent('ch_PP-OCRv4.det')}`;

beforeAll(async () => {
  idsServer = await serveModel(ids);
  scaledServer = await serveModel(scaled, false);
});

afterAll(async () => {
  for (const c of clients) c.close();
  for (const r of rpcs) await r.close();
  for (const s of servers) await s.close();
});

const post = async (url: string, body: string) => {
  const res = await fetch(url, { method: 'POST', body, headers: { 'content-type': 'application/json' } });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
};

describe('an integer input refuses floats instead of cutting them', () => {
  it('over /predict (a bare list), v2 JSON and gRPC; whole numbers still pass', async () => {
    const { url, grpc } = idsServer;
    for (const body of ['[[1.5, 2]]', '[[1.9, 2]]', '[[1.0, 2]]']) {
      const res = await post(`${url}/predict`, body);
      expect([res.status, res.json.code]).toEqual([400, 'TENSOR_DTYPE_MISMATCH']);
    }
    expect(await post(`${url}/predict`, '[[1, 2]]')).toEqual({ status: 200, json: [[2, 3]] } as never);
    const v2 = await inferJson(`${url}${V2_IDS}/infer`, {
      inputs: [{ name: 'ids', datatype: 'INT32', shape: [1, 2], data: [1.5, 2] }],
    });
    expect([v2.status, v2.json.code]).toEqual([400, 'TENSOR_DTYPE_MISMATCH']);
    const fp = await inferJson(`${url}${V2_IDS}/infer`, {
      inputs: [{ name: 'ids', datatype: 'FP32', shape: [1, 2], data: [1.5, 2] }],
    });
    expect([fp.status, fp.json.code]).toEqual([400, 'TENSOR_DTYPE_MISMATCH']);
    const err = await grpc.error('ModelInfer', {
      model_name: 'ch_PP-OCRv4.det',
      inputs: [{ name: 'ids', datatype: 'FP32', shape: [1, 2], contents: { fp32_contents: [1.5, 2] } }],
    });
    expect(err.code).toBe(3); // INVALID_ARGUMENT
    // A value out of the input's range is refused too, never wrapped.
    const big = await post(`${url}/predict`, '[[3000000000, 1]]');
    expect([big.status, big.json.code]).toEqual([400, 'TENSOR_DTYPE_MISMATCH']);
  });
});

describe('an INT64 in v2 JSON beyond what a JSON number carries exactly is refused, not rounded', () => {
  it('9007199254740993 is a 400 that points to the binary form; 9007199254740991 passes', async () => {
    const { url } = scaledServer;
    const body = (sr: string) =>
      `{"inputs":[{"name":"x","datatype":"FP32","shape":[1],"data":[1]},{"name":"sr","datatype":"INT64","shape":[1],"data":[${sr}]}]}`;
    const far = await post(`${url}/v2/models/scaled/infer`, body('9007199254740993'));
    expect(far.status).toBe(400);
    expect(far.json.error).toMatch(/INT64 value at index 0 is beyond ±9007199254740991.*binary form/);
    const near = await post(`${url}/v2/models/scaled/infer`, body('-9007199254740991'));
    expect(near.status).toBe(200);
  });
});

describe("a v2 input name the model does not have is refused, naming the model's inputs", () => {
  it('over v2 JSON, v2 binary and gRPC', async () => {
    const { url, grpc } = idsServer;
    const json = await inferJson(`${url}${V2_IDS}/infer`, {
      inputs: [{ name: 'nope', datatype: 'INT32', shape: [1, 2], data: [1, 2] }],
    });
    expect([json.status, json.json.code]).toEqual([400, 'UNKNOWN_TENSOR']);
    expect(json.json.error).toContain('expected ids: int32');
    const binary = await inferBinary(`${url}${V2_IDS}/infer`, [
      { name: 'nope', datatype: 'INT32', shape: [1, 2], bytes: le(new Int32Array([1, 2])) },
    ]);
    expect([binary.status, binary.json.code]).toEqual([400, 'UNKNOWN_TENSOR']);
    const err = await grpc.error('ModelInfer', {
      model_name: 'ch_PP-OCRv4.det',
      inputs: [{ name: 'nope', datatype: 'INT32', shape: [1, 2], contents: { int_contents: [1, 2] } }],
    });
    expect([err.code, err.details]).toEqual([3, expect.stringContaining('expected ids: int32')]);
    const ok = await grpc.infer({
      model_name: 'ch_PP-OCRv4.det',
      inputs: [{ name: 'ids', datatype: 'INT32', shape: [1, 2], contents: { int_contents: [1, 2] } }],
    });
    expect(ok.outputs[0]!.contents!.int_contents).toEqual([2, 3]);
  });
});

describe('a scalar input takes one element of any rank, and nothing else', () => {
  it('over /predict, v2 JSON, v2 binary and gRPC', async () => {
    const { url, grpc } = scaledServer;
    for (const sr of ['2', '[2]', '[[2]]']) {
      const res = await post(`${url}/predict`, `{"x": [1, 2], "sr": ${sr}}`);
      expect([res.status, res.json]).toEqual([200, { y: [2, 4] }]);
    }
    const two = await post(`${url}/predict`, '{"x": [1, 2], "sr": [2, 3]}');
    expect([two.status, two.json.code]).toEqual([400, 'TENSOR_RANK_MISMATCH']);
    const v2 = await inferJson(`${url}/v2/models/scaled/infer`, {
      inputs: [
        { name: 'x', datatype: 'FP32', shape: [2], data: [1, 2] },
        { name: 'sr', datatype: 'INT64', shape: [1], data: [3] },
      ],
    });
    expect([v2.status, (v2.json.outputs as Array<{ data: number[] }>)[0]!.data]).toEqual([200, [3, 6]]);
    const binary = await inferBinary(`${url}/v2/models/scaled/infer`, [
      { name: 'x', datatype: 'FP32', shape: [2], bytes: le(new Float32Array([1, 2])) },
      { name: 'sr', datatype: 'INT64', shape: [1, 1], bytes: le(new BigInt64Array([4n])) },
    ]);
    expect([binary.status, (binary.json.outputs as Array<{ data: number[] }>)[0]!.data]).toEqual([
      200,
      [4, 8],
    ]);
    const rpc = await grpc.infer({
      model_name: 'scaled',
      inputs: [
        { name: 'x', datatype: 'FP32', shape: [2], contents: { fp32_contents: [1, 2] } },
        { name: 'sr', datatype: 'INT64', shape: [1], contents: { int64_contents: ['5'] } },
      ],
    });
    expect(rpc.outputs[0]!.contents!.fp32_contents).toEqual([5, 10]);
    const none = await inferJson(`${url}/v2/models/scaled/infer`, {
      inputs: [
        { name: 'x', datatype: 'FP32', shape: [2], data: [1, 2] },
        { name: 'sr', datatype: 'INT64', shape: [0], data: [] },
      ],
    });
    expect([none.status, none.json.code]).toEqual([400, 'TENSOR_RANK_MISMATCH']);
  });
});

describe("the v2 model name is the model's own, and the served models are listed", () => {
  it('metadata, infer and ready at /v2/models/<name>, GET /v2/models and the repository index', async () => {
    const { url, grpc } = idsServer;
    const meta = await fetch(`${url}${V2_IDS}`);
    expect(meta.status).toBe(200);
    expect(await meta.json()).toMatchObject({
      name: 'ch_PP-OCRv4.det',
      inputs: [{ name: 'ids', datatype: 'INT32', shape: [-1, 2] }],
      outputs: [{ name: 'next', datatype: 'INT32', shape: [-1, 2] }],
    });
    const infer = await inferJson(`${url}${V2_IDS}/infer`, {
      inputs: [{ name: 'ids', datatype: 'INT32', shape: [1, 2], data: [1, 2] }],
    });
    expect(infer.json).toMatchObject({
      model_name: 'ch_PP-OCRv4.det',
      outputs: [{ name: 'next', data: [2, 3] }],
    });
    expect((await fetch(`${url}${V2_IDS}/ready`)).status).toBe(200);
    const list = await fetch(`${url}/v2/models`);
    expect([list.status, await list.json()]).toEqual([
      200,
      {
        models: [
          {
            name: 'ch_PP-OCRv4.det',
            api: 'ch_PP_OCRv4_det',
            route: '/predict',
            metadata: '/v2/models/ch_PP-OCRv4.det',
          },
        ],
      },
    ]);
    const index = await fetch(`${url}/v2/repository/index`, { method: 'POST', body: '{}' });
    expect(await index.json()).toEqual([
      { name: 'ch_PP-OCRv4.det', version: '', state: 'READY', reason: '' },
    ]);
    const rpcMeta = await grpc.call<{ name: string }>('ModelMetadata', { name: 'ch_PP-OCRv4.det' });
    expect(rpcMeta.name).toBe('ch_PP-OCRv4.det');
    // The API page says where the model is served.
    const docs = (await (await fetch(`${url}/docs.json`)).json()) as { info: { description: string } };
    expect(docs.info.description).toContain('/v2/models/ch_PP-OCRv4.det');
  });

  it('a name that is not a path segment is served URL-encoded', async () => {
    const server = await serveModel({ ...ids, name: 'Modèle 1/2' });
    const path = `/v2/models/${encodeURIComponent('Modèle 1/2')}`;
    const meta = await fetch(`${server.url}${path}`);
    expect([meta.status, ((await meta.json()) as { name: string }).name]).toEqual([200, 'Modèle 1/2']);
  });
});

describe('a tensor of zero elements with absurd dimensions', () => {
  it('is refused with 400 over v2 JSON, binary and gRPC', async () => {
    const { url, grpc } = idsServer;
    const shape = [0, 2 ** 40];
    const json = await inferJson(`${url}${V2_IDS}/infer`, {
      inputs: [{ name: 'ids', datatype: 'INT32', shape, data: [] }],
    });
    expect([json.status, json.json.code]).toEqual([400, 'TENSOR_SHAPE_TOO_LARGE']);
    const binary = await inferBinary(`${url}${V2_IDS}/infer`, [
      { name: 'ids', datatype: 'INT32', shape: [1, 3, 0, 2 ** 40], bytes: new Uint8Array(0) },
    ]);
    expect([binary.status, binary.json.code]).toEqual([400, 'TENSOR_SHAPE_TOO_LARGE']);
    const err = await grpc.error('ModelInfer', {
      model_name: 'ch_PP-OCRv4.det',
      inputs: [{ name: 'ids', datatype: 'INT32', shape: ['0', String(2 ** 40)], contents: {} }],
    });
    expect(err.code).toBe(3);
  });
});

describe('what the model cannot run, or answers too large, is refused before it runs', () => {
  /** `ids` with a count of the calls that reached it. */
  function counted(): { model: LoadedModel; runs: () => number } {
    let runs = 0;
    return {
      model: {
        ...ids,
        run: async (x) => {
          runs++;
          return ids.run(x);
        },
      },
      runs: () => runs,
    };
  }

  it('an empty dimension besides the batch: 400 over v2 JSON and binary, INVALID_ARGUMENT over gRPC', async () => {
    const { model, runs } = counted();
    const { url, grpc } = await serveModel(model, false);
    const json = await inferJson(`${url}${V2_IDS}/infer`, {
      inputs: [{ name: 'ids', datatype: 'INT32', shape: [1, 0], data: [] }],
    });
    // `ids` takes [-1, 2]: a fixed dimension given as 0 does not fit its shape.
    expect([json.status, json.json.code]).toEqual([400, 'TENSOR_SHAPE_MISMATCH']);
    const err = await grpc.error('ModelInfer', {
      model_name: 'ch_PP-OCRv4.det',
      inputs: [{ name: 'ids', datatype: 'INT32', shape: ['1', '0'], contents: {} }],
    });
    expect(err.code).toBe(3);
    // `scaled` is not batchable: its x may not be empty either (the scalar sr has no batch dimension).
    const empty = await inferJson(`${scaledServer.url}/v2/models/scaled/infer`, {
      inputs: [
        { name: 'x', datatype: 'FP32', shape: [0], data: [] },
        { name: 'sr', datatype: 'INT64', shape: [1], data: [2] },
      ],
    });
    expect([empty.status, empty.json.code]).toEqual([400, 'TENSOR_EMPTY_DIMENSION']);
    const rpcEmpty = await scaledServer.grpc.error('ModelInfer', {
      model_name: 'scaled',
      inputs: [
        { name: 'x', datatype: 'FP32', shape: ['0'], contents: {} },
        { name: 'sr', datatype: 'INT64', shape: ['1'], contents: { int64_contents: ['2'] } },
      ],
    });
    expect([rpcEmpty.code, rpcEmpty.details]).toEqual([3, expect.stringContaining("input 'x' has size 0")]);
    // An empty batch of a batchable model runs, unbatched.
    const rows = await inferJson(`${url}${V2_IDS}/infer`, {
      inputs: [{ name: 'ids', datatype: 'INT32', shape: [0, 2], data: [] }],
    });
    expect([rows.status, (rows.json.outputs as Array<{ shape: number[] }>)[0]!.shape]).toEqual([200, [0, 2]]);
    expect(runs()).toBe(1);
  });

  it('an answer of more than maxAnswerElements: 422 over /predict and v2, FAILED_PRECONDITION over gRPC', async () => {
    const { model, runs } = counted();
    const { url, grpc } = await serveModel(model, true, { limits: { maxAnswerElements: 8 } });
    // 5 rows of ids → 5 rows of `next` (int32 [-1, 2]): 10 values, over the 8 this server sends.
    const five = [...Array(5)].map((_, i) => [i, i]);
    const native = await post(`${url}/predict`, JSON.stringify(five));
    expect([native.status, native.json.code]).toEqual([422, 'ANSWER_TOO_LARGE']);
    const v2 = await inferJson(`${url}${V2_IDS}/infer`, {
      inputs: [{ name: 'ids', datatype: 'INT32', shape: [5, 2], data: five.flat() }],
    });
    expect([v2.status, v2.json.code]).toEqual([422, 'ANSWER_TOO_LARGE']);
    const err = await grpc.error('ModelInfer', {
      model_name: 'ch_PP-OCRv4.det',
      inputs: [
        { name: 'ids', datatype: 'INT32', shape: ['5', '2'], contents: { int_contents: five.flat() } },
      ],
    });
    expect([err.code, err.details]).toEqual([9, expect.stringContaining('maxAnswerElements')]);
    expect(runs()).toBe(0);
    expect((await post(`${url}/predict`, '[[1, 2], [3, 4]]')).status).toBe(200);
    expect(runs()).toBe(1);
  });
});
