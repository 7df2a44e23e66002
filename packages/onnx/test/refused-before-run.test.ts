import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BadInput, type LoadedModel, modelService, NDArray, serve, silentLogger } from '@tiffin/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadModel } from '../src/index.js';
import { writeConv, writeFixed, writeLinear, writeMulti } from './fixtures/test-models.js';

/*
 * What a zero-code ONNX model (the real ONNX Runtime, in its runner thread) refuses before it runs: a tensor with
 * an empty dimension the model cannot run, and a request whose answer the signature already says is too large.
 * Each served model counts its runs, so a test can tell a refusal before the run from one after it.
 */

let dir: string;
const closers: Array<() => Promise<unknown>> = [];

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'tiffin-refused-'));
});
afterAll(async () => {
  for (const close of closers.reverse()) await close();
  rmSync(dir, { recursive: true, force: true });
});

interface Served {
  url: string;
  /** Calls that reached the model's runner. */
  runs: () => number;
}

async function served(
  path: string,
  options: Parameters<typeof serve>[1] = {},
  service: Parameters<typeof modelService>[1] = {},
): Promise<Served> {
  const model = await loadModel(path, { instances: 1 });
  let runs = 0;
  const counted: LoadedModel = {
    ...model,
    run: (inputs, signal) => {
      runs++;
      return model.run(inputs, signal);
    },
    close: () => model.close(),
  };
  const server = await serve(modelService(counted, service), {
    port: 0,
    host: '127.0.0.1',
    handleSignals: false,
    logger: silentLogger,
    ...options,
  });
  closers.push(() => server.close());
  return { url: server.url, runs: () => runs };
}

async function post(
  url: string,
  body: unknown,
): Promise<{
  status: number;
  json: { code?: string; error?: string; outputs?: Array<{ shape: number[] }> };
}> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as never };
}

/** A v2 request in the binary form: the JSON header, then the tensors' little-endian bytes. */
async function postBinary(
  url: string,
  inputs: Array<{ name: string; shape: number[]; datatype: string; bytes: Uint8Array }>,
): Promise<{ status: number; json: { code?: string; error?: string } }> {
  const header = Buffer.from(
    JSON.stringify({
      inputs: inputs.map(({ name, shape, datatype, bytes }) => ({
        name,
        shape,
        datatype,
        parameters: { binary_data_size: bytes.byteLength },
      })),
    }),
  );
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/octet-stream',
      'inference-header-content-length': String(header.length),
    },
    body: Buffer.concat([header, ...inputs.map((i) => i.bytes)]),
  });
  return { status: res.status, json: (await res.json()) as never };
}

describe('a tensor with an empty dimension the model cannot run is a 400 naming the input, before the run', () => {
  let conv: Served;
  beforeAll(async () => {
    conv = await served(writeConv(dir));
  }, 60_000);

  it('refuses [1, 3, 1, 0] over v2 JSON, v2 binary and /predict, and the model never runs', async () => {
    const v2 = await post(`${conv.url}/v2/models/conv/infer`, {
      inputs: [{ name: 'x', datatype: 'FP32', shape: [1, 3, 1, 0], data: [] }],
    });
    expect([v2.status, v2.json.code]).toEqual([400, 'TENSOR_EMPTY_DIMENSION']);
    expect(v2.json.error).toMatch(/input 'x'/);
    expect(v2.json.error).toMatch(/dimension 3/);
    const binary = await postBinary(`${conv.url}/v2/models/conv/infer`, [
      { name: 'x', datatype: 'FP32', shape: [1, 3, 0, 0], bytes: new Uint8Array(0) },
    ]);
    expect([binary.status, binary.json.code]).toEqual([400, 'TENSOR_EMPTY_DIMENSION']);
    // The native route: a nested list of shape [1, 3, 1, 0].
    const native = await post(`${conv.url}/predict`, [[[[]], [[]], [[]]]]);
    expect([native.status, native.json.code]).toEqual([400, 'TENSOR_EMPTY_DIMENSION']);
    expect(native.json.error).toMatch(/input 'x'/);
    expect(conv.runs()).toBe(0);
  });

  it("model.run() refuses it too, with the model's inputs in the 400 (a service of one's own passes it on)", async () => {
    for (const instances of [0, 1]) {
      const model = await loadModel(writeConv(dir, `conv-run-${instances}.onnx`), { instances });
      closers.push(() => model.close());
      const err = (await model
        .run({ x: new NDArray(new Float32Array(0), [1, 3, 1, 0], 'float32') })
        .catch((e: unknown) => e)) as BadInput;
      expect(err).toBeInstanceOf(BadInput);
      expect(err.toBody()).toMatchObject({
        code: 'TENSOR_EMPTY_DIMENSION',
        detail: { expected: [{ name: 'x' }] },
      });
      const empty = await model.run({ x: new NDArray(new Float32Array(0), [0, 3, 2, 2], 'float32') });
      expect(empty.y!.shape).toEqual([0, 2, 2, 2]);
    }
  }, 60_000);

  it('an empty batch still runs unbatched (ONNX Runtime takes 0 rows) and answers 0 rows', async () => {
    const unbatched = await served(writeConv(dir, 'conv-unbatched.onnx'), {}, { batching: false });
    const url = `${unbatched.url}/v2/models/conv-unbatched/infer`;
    const empty = await post(url, {
      inputs: [{ name: 'x', datatype: 'FP32', shape: [0, 3, 2, 2], data: [] }],
    });
    expect(empty.status).toBe(200);
    expect(empty.json.outputs?.[0]?.shape).toEqual([0, 2, 2, 2]);
    const image = await post(url, {
      inputs: [{ name: 'x', datatype: 'FP32', shape: [1, 3, 1, 1], data: [1, 2, 3] }],
    });
    expect(image.status).toBe(200);
    const refused = await post(url, {
      inputs: [{ name: 'x', datatype: 'FP32', shape: [1, 3, 1, 0], data: [] }],
    });
    expect([refused.status, refused.json.code]).toEqual([400, 'TENSOR_EMPTY_DIMENSION']);
    expect(unbatched.runs()).toBe(2);
  }, 60_000);

  it('a fixed dimension given as 0 is a 400 naming the input, before the run', async () => {
    const fixed = await served(writeFixed(dir));
    const answer = await post(`${fixed.url}/v2/models/fixed/infer`, {
      inputs: [{ name: 'x', datatype: 'FP32', shape: [0, 4], data: [] }],
    });
    expect([answer.status, answer.json.code]).toEqual([400, 'TENSOR_SHAPE_MISMATCH']);
    expect(answer.json.error).toMatch(/input 'x'/);
    expect(fixed.runs()).toBe(0);
  }, 60_000);
});

describe('an answer the signature says is too large is a 422 before the run', () => {
  let linear: Served;
  beforeAll(async () => {
    linear = await served(writeLinear(dir));
  }, 60_000);

  it('refuses 32 MiB of [0,0,0,0] rows (y[batch, 3]: 10 M values) with 422 ANSWER_TOO_LARGE, the model never run', async () => {
    const rows = Math.floor((32 * 1024 * 1024 - 2) / 10);
    const body = `[${new Array(rows).fill('[0,0,0,0]').join(',')}]`;
    const refused = await post(`${linear.url}/predict`, body);
    expect([refused.status, refused.json.code]).toEqual([422, 'ANSWER_TOO_LARGE']);
    expect(refused.json.error).toMatch(/maxAnswerElements/);
    expect(linear.runs()).toBe(0);
    // The same rows in v2 binary form (2 M rows, 32 MB): refused before the run as well.
    const binary = await postBinary(`${linear.url}/v2/models/linear/infer`, [
      { name: 'x', datatype: 'FP32', shape: [2_000_000, 4], bytes: new Uint8Array(2_000_000 * 16) },
    ]);
    expect([binary.status, binary.json.code]).toEqual([422, 'ANSWER_TOO_LARGE']);
    expect(linear.runs()).toBe(0);
    const small = await post(`${linear.url}/predict`, [[1, 2, 3, 4]]);
    expect(small.status).toBe(200);
    expect(linear.runs()).toBe(1);
  }, 120_000);

  it('counts every output of a model with several (13 values a row) against the server’s limit', async () => {
    const multi = await served(writeMulti(dir), { limits: { maxAnswerElements: 1300 } });
    const rows = (n: number, width: number) => Array.from({ length: n }, () => new Array(width).fill(0));
    const over = await post(`${multi.url}/predict`, {
      x: rows(101, 4),
      ids: rows(101, 2),
      state: rows(101, 8),
    });
    expect([over.status, over.json.code]).toEqual([422, 'ANSWER_TOO_LARGE']);
    const v2 = await post(`${multi.url}/v2/models/multi/infer`, {
      inputs: [
        { name: 'x', datatype: 'FP32', shape: [101, 4], data: new Array(404).fill(0) },
        { name: 'ids', datatype: 'INT64', shape: [101, 2], data: new Array(202).fill(0) },
        { name: 'state', datatype: 'FP32', shape: [101, 8], data: new Array(808).fill(0) },
      ],
    });
    expect([v2.status, v2.json.code]).toEqual([422, 'ANSWER_TOO_LARGE']);
    expect(multi.runs()).toBe(0);
    const fits = await post(`${multi.url}/predict`, {
      x: rows(100, 4),
      ids: rows(100, 2),
      state: rows(100, 8),
    });
    expect(fits.status).toBe(200);
    expect(multi.runs()).toBe(1);
  }, 60_000);
});
