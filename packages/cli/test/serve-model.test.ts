import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { RequestMessage, ResponseMessage } from '@tiffin/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inferBinary, inferJson, le } from '../../core/test/inference-protocol/v2-client.js';
import {
  linearExpected,
  multiExpected,
  writeDense,
  writeFixed,
  writeLinear,
  writeMulti,
  writeRegroup,
  writeTwelve,
} from '../../onnx/test/fixtures/test-models.js';
import { spawnTiffin } from './cli-process.js';
import { freePort, inferenceV2Client, type ModelInferAnswer, nativeClient } from './grpc-clients.js';
import { ModelServers, postJson } from './model-servers.js';

/** Zero code: `tiffin serve model.onnx` for models the test writes, checked against the math they compute. */

let dir: string;
let home: string;
const servers = new ModelServers();
const serveModel = (args: string[]) => servers.serve(args);
const post = postJson;

function expectClose(got: unknown, want: number[][]): void {
  const rows = got as number[][];
  expect(rows.length).toBe(want.length);
  for (const [i, row] of rows.entries())
    for (const [j, v] of row.entries()) expect(v).toBeCloseTo(want[i]![j]!, 5);
}

beforeAll(async () => {
  await servers.open('tiffin-serve-model-');
  dir = servers.dir;
  home = servers.home;
});
afterAll(() => servers.close());

describe('tiffin serve model.onnx (one input, one output, dynamic batch)', () => {
  let url: string;
  beforeAll(async () => {
    url = await serveModel([writeLinear(dir), '--max-batch-size', '8', '--max-latency-ms', '20']);
  }, 60_000);

  it('POST /predict takes and returns nested lists (NumpyNdarray), and matches x·W + b', async () => {
    const x = [
      [1, 2, 3, 4],
      [0.5, -1, 2, 0],
    ];
    const res = await post(`${url}/predict`, x);
    expect(res.status).toBe(200);
    expectClose(res.json, linearExpected(x));
  });

  it('batches concurrent requests and gives each caller its own rows', async () => {
    const xs = Array.from({ length: 12 }, (_, i) => [[i, i + 1, -i, 2]]);
    const answers = await Promise.all(xs.map((x) => post(`${url}/predict`, x)));
    for (const [i, a] of answers.entries()) expectClose(a.json, linearExpected(xs[i]!));
    const metrics = await (await fetch(`${url}/metrics`)).text();
    expect(metrics).toMatch(/batch/);
  });

  it('serves the Open Inference Protocol under the model name: metadata from the signature, JSON and binary infer', async () => {
    const meta = (await (await fetch(`${url}/v2/models/linear`)).json()) as Record<string, unknown>;
    expect(meta).toMatchObject({
      name: 'linear',
      inputs: [{ name: 'x', datatype: 'FP32', shape: [-1, 4] }],
      outputs: [{ name: 'y', datatype: 'FP32', shape: [-1, 3] }],
    });
    const x = [[1, 0, 0, 1]];
    const json = await inferJson(`${url}/v2/models/linear/infer`, {
      inputs: [{ name: 'x', datatype: 'FP32', shape: [1, 4], data: x.flat() }],
    });
    expect(json.status).toBe(200);
    const out = (json.json.outputs as Array<{ name: string; shape: number[]; data: number[] }>)[0]!;
    expect(out.name).toBe('y');
    expect(out.shape).toEqual([1, 3]);
    expectClose([out.data], linearExpected(x));
    const binary = await inferBinary(
      `${url}/v2/models/linear/infer`,
      [{ name: 'x', shape: [1, 4], datatype: 'FP32', bytes: le(Float32Array.from(x.flat())) }],
      { outputs: [{ name: 'y', parameters: { binary_data: true } }] },
    );
    expect(binary.status).toBe(200);
    const bytes = binary.binary.get('y')!;
    expectClose([[...new Float32Array(bytes.buffer, bytes.byteOffset, 3)]], linearExpected(x));
  });

  it('shows the signature and a request example on the API page', async () => {
    const doc = (await (await fetch(`${url}/docs.json`)).json()) as {
      paths: Record<string, { post: { requestBody: { content: Record<string, { example?: unknown }> } } }>;
    };
    expect(doc.paths['/predict']!.post.requestBody.content['application/json']!.example).toEqual([
      [0, 0, 0, 0],
    ]);
  });

  it('bad input is a 400 whose code says what is wrong and whose detail is the expected signature', async () => {
    const rank = await post(`${url}/predict`, [1, 2, 3, 4]);
    expect(rank.status).toBe(400);
    expect(rank.json).toMatchObject({
      code: 'TENSOR_RANK_MISMATCH',
      detail: { expected: [{ name: 'x', dtype: 'float32', shape: [-1, 4] }] },
    });
    expect((await post(`${url}/predict`, [[1, 2, 3]])).json.code).toBe('TENSOR_SHAPE_MISMATCH');
    expect((await post(`${url}/predict`, [['a', 'b', 'c', 'd']])).json.code).toBe('TENSOR_DTYPE_MISMATCH');
    const tooMany = await post(
      `${url}/predict`,
      Array.from({ length: 9 }, () => [1, 2, 3, 4]),
    );
    // More rows than --max-batch-size: a batch of its own, not a refusal.
    expect(tooMany.status).toBe(200);
    expect(tooMany.json).toHaveLength(9);
    expect((await post(`${url}/predict`, '{"x": [[1,')).status).toBe(400);
    const v2 = await inferJson(`${url}/v2/models/linear/infer`, {
      inputs: [{ name: 'x', datatype: 'INT64', shape: [1, 3], data: [1, 2, 3] }],
    });
    expect(v2.status).toBe(400);
    expect(v2.json.code).toBe('TENSOR_SHAPE_MISMATCH');
  });
});

describe('tiffin serve for several named inputs and outputs (int64, a state tensor), from the store', () => {
  let url: string;
  let grpcPort: number;
  beforeAll(async () => {
    grpcPort = await freePort();
    const imported = spawnTiffin(['models', 'import', writeMulti(dir), '--name', 'multi'], {
      TIFFIN_HOME: home,
    });
    const done = await imported.done;
    expect(done.stdout).toMatch(/Saved model multi:\S+ \(module onnx\)/);
    url = await serveModel(['onnx:multi:latest', '--grpc', '--grpc-port', String(grpcPort)]);
  }, 60_000);

  it('POST /predict takes and returns a JSON object of named tensors; int64 stays exact; state carries over', async () => {
    const x = [[1, 2, 3, 4]];
    let state = [[0, 0, 0, 0, 0, 0, 0, 0]];
    const body = (s: number[][]) =>
      `{"x": [[1,2,3,4]], "ids": [[9007199254740993, -3]], "state": ${JSON.stringify(s)}}`;
    for (let step = 0; step < 2; step++) {
      const res = await fetch(`${url}/predict`, { method: 'POST', body: body(state) });
      expect(res.status).toBe(200);
      const text = await res.text();
      // 2^53 + 1 + 1, written with all its digits
      expect(text).toContain('"next_ids":[[9007199254740994,-2]]');
      const json = JSON.parse(text) as Record<string, number[][]>;
      const want = multiExpected(x, [[0, 0]], state);
      expectClose(json.scores, want.scores);
      expectClose(json.next_state, want.next_state);
      state = json.next_state!;
    }
  });

  it('the protocol lists every named tensor and infers with them', async () => {
    const meta = (await (await fetch(`${url}/v2/models/multi`)).json()) as {
      inputs: { name: string; datatype: string }[];
    };
    expect(meta.inputs.map((i) => `${i.name}:${i.datatype}`)).toEqual(['x:FP32', 'ids:INT64', 'state:FP32']);
    const res = await inferJson(`${url}/v2/models/multi/infer`, {
      inputs: [
        { name: 'x', datatype: 'FP32', shape: [1, 4], data: [0, 0, 0, 0] },
        { name: 'ids', datatype: 'INT64', shape: [1, 2], data: [1, 2] },
        { name: 'state', datatype: 'FP32', shape: [1, 8], data: [2, 2, 2, 2, 2, 2, 2, 2] },
      ],
    });
    const outs = Object.fromEntries(
      (res.json.outputs as Array<{ name: string; data: number[] }>).map((o) => [o.name, o.data]),
    );
    expect(outs.next_ids).toEqual([2, 3]);
    expect(outs.next_state).toEqual([2, 2, 2, 2, 2, 2, 2, 2]);
  });

  it('answers over gRPC: the native Call with a JSON struct of named tensors, and ModelInfer with typed contents', async () => {
    const client = nativeClient(grpcPort);
    const json = {
      structValue: {
        fields: {
          x: {
            listValue: {
              values: [{ listValue: { values: [1, 0, 0, 0].map((v) => ({ numberValue: v })) } }],
            },
          },
          ids: {
            listValue: { values: [{ listValue: { values: [{ numberValue: 7 }, { numberValue: 8 }] } }] },
          },
          state: { listValue: { values: [{ listValue: { values: Array(8).fill({ numberValue: 4 }) } }] } },
        },
      },
    };
    const res = await new Promise<ResponseMessage>((resolve, reject) =>
      client.Call({ api_name: 'multi', json } as RequestMessage, (err, r) =>
        err ? reject(err) : resolve(r),
      ),
    );
    client.close();
    const fields = (res.json as { structValue: { fields: Record<string, unknown> } }).structValue.fields;
    expect(JSON.stringify(fields.next_ids)).toContain('"numberValue":9');
    const v2 = inferenceV2Client(grpcPort);
    const inferred = await new Promise<ModelInferAnswer>((resolve, reject) =>
      v2.ModelInfer(
        {
          model_name: 'multi',
          inputs: [
            { name: 'x', datatype: 'FP32', shape: [1, 4], contents: { fp32_contents: [0, 0, 0, 0] } },
            {
              name: 'ids',
              datatype: 'INT64',
              shape: [1, 2],
              contents: { int64_contents: ['9007199254740993', '1'] },
            },
            { name: 'state', datatype: 'FP32', shape: [1, 8], contents: { fp32_contents: Array(8).fill(2) } },
          ],
        },
        (err, r) => (err ? reject(err) : resolve(r)),
      ),
    );
    v2.close();
    const byName = Object.fromEntries(inferred.outputs.map((o) => [o.name, o.contents]));
    expect(byName.next_ids!.int64_contents).toEqual(['9007199254740994', '2']);
    expect(byName.next_state!.fp32_contents).toEqual(Array(8).fill(2));
  });

  it('unknown, missing, wrongly typed or mismatched tensors are 400s naming the expected signature', async () => {
    const ok = { x: [[1, 2, 3, 4]], ids: [[1, 2]], state: [[0, 0, 0, 0, 0, 0, 0, 0]] };
    expect((await post(`${url}/predict`, { ...ok, extra: [1] })).json.code).toBe('UNKNOWN_TENSOR');
    const { ids: _ids, ...noIds } = ok;
    const missing = await post(`${url}/predict`, noIds);
    expect(missing.json).toMatchObject({ code: 'MISSING_TENSOR' });
    expect(String(missing.json.error)).toContain('ids: int64 (-1, 2)');
    expect((await post(`${url}/predict`, { ...ok, ids: [[1.5, 2]] })).json.code).toBe(
      'TENSOR_DTYPE_MISMATCH',
    );
    expect((await post(`${url}/predict`, { ...ok, state: [[0, 0]] })).json.code).toBe(
      'TENSOR_SHAPE_MISMATCH',
    );
    expect(
      (
        await post(`${url}/predict`, {
          ...ok,
          ids: [
            [1, 2],
            [3, 4],
          ],
        })
      ).json.code,
    ).toBe('TENSOR_BATCH_MISMATCH');
    expect((await post(`${url}/predict`, [1, 2])).json.code).toBe('TENSORS_NOT_AN_OBJECT');
    expect((await post(`${url}/predict`, { ...ok, x: [[1, 2], [3]] })).json.code).toBe('TENSOR_NOT_AN_ARRAY');
    const dup = await inferJson(`${url}/v2/models/multi/infer`, {
      inputs: [
        { name: 'x', datatype: 'FP32', shape: [1, 4], data: [0, 0, 0, 0] },
        { name: 'x', datatype: 'FP32', shape: [1, 4], data: [0, 0, 0, 0] },
      ],
    });
    expect(dup.status).toBe(400);
  });
});

describe('tiffin serve --outputs: a model with twelve outputs answers with those chosen', () => {
  it('at serve (/predict, v2 metadata and infer) and per v2 request; an unknown name is refused at start', async () => {
    const url = await serveModel([writeTwelve(dir), '--outputs', 'out_3,out_0']);
    const x = [[1, 2, 3]];
    const res = await post(`${url}/predict`, { x });
    expect(res.status).toBe(200);
    expect(Object.keys(res.json)).toEqual(['out_3', 'out_0']);
    expect(res.json).toEqual({ out_3: [[4, 8, 12]], out_0: [[1, 2, 3]] });
    const meta = (await (await fetch(`${url}/v2/models/twelve`)).json()) as {
      outputs: Array<{ name: string }>;
    };
    expect(meta.outputs.map((o) => o.name)).toEqual(['out_3', 'out_0']);
    const one = await inferBinary(
      `${url}/v2/models/twelve/infer`,
      [{ name: 'x', datatype: 'FP32', shape: [1, 3], bytes: le(new Float32Array([1, 2, 3])) }],
      { outputs: [{ name: 'out_3', parameters: { binary_data: true } }] },
    );
    expect((one.json.outputs as Array<{ name: string }>).map((o) => o.name)).toEqual(['out_3']);
    expect([...new Float32Array(new Uint8Array(one.binary.get('out_3')!).buffer)]).toEqual([4, 8, 12]);
    const refused = spawnTiffin(['serve', writeTwelve(dir, 'twelve-bad.onnx'), '--outputs', 'out_3,nope'], {
      TIFFIN_HOME: home,
    });
    servers.processes.push(refused);
    const exited = await refused.done;
    expect(exited.code).not.toBe(0);
    expect(exited.stderr).toMatch(/has no output 'nope' \(outputs: out_0, out_1/);
  }, 120_000);
});

describe('tiffin serve: a fixed batch dimension, a model that throws at run time, health under load', () => {
  it('a fixed first dimension is served unbatched and takes exactly that shape', async () => {
    const url = await serveModel([writeFixed(dir)]);
    const ok = await post(`${url}/predict`, [
      [1, -2, 3, -4],
      [-1, 2, -3, 4],
    ]);
    expect(ok.json).toEqual([
      [1, 0, 3, 0],
      [0, 2, 0, 4],
    ]);
    expect((await post(`${url}/predict`, [[1, 2, 3, 4]])).json.code).toBe('TENSOR_SHAPE_MISMATCH');
    const doc = (await (await fetch(`${url}/docs.json`)).json()) as {
      paths: Record<string, { post: Record<string, unknown> }>;
    };
    expect(doc.paths['/predict']!.post['x-tiffin-batching']).toBeUndefined();
  }, 60_000);

  it('--instances 0 runs a tiny model on the event loop, batched; a negative count is refused', async () => {
    const url = await serveModel([
      writeLinear(dir, 'inline.onnx'),
      '--instances',
      '0',
      '--max-batch-size',
      '4',
    ]);
    const xs = Array.from({ length: 9 }, (_, i) => [[i, -i, 1, 2]]);
    const answers = await Promise.all(xs.map((x) => post(`${url}/predict`, x)));
    for (const [i, a] of answers.entries()) expectClose(a.json, linearExpected(xs[i]!));
    const refused = spawnTiffin(['serve', writeLinear(dir, 'neg.onnx'), '--instances', '-1'], {
      TIFFIN_HOME: home,
    });
    servers.processes.push(refused);
    const exited = await refused.done;
    expect(exited.code).not.toBe(0);
    expect(exited.stderr).toMatch(/--instances/);
  }, 60_000);

  it("a run-time error is a 500 with a short safe message, the runtime's message in the log, and the server goes on", async () => {
    // Dimension 0 of input and output is dynamic, yet not a batch (6 values in, 2 rows out): batching off.
    const server = spawnTiffin(
      ['serve', writeRegroup(dir), '--port', '0', '--instances', '1', '--no-batching'],
      {
        TIFFIN_HOME: home,
      },
    );
    servers.processes.push(server);
    const url = await server.url;
    const bad = await post(`${url}/predict`, [1, 2, 3, 4]);
    expect(bad.status).toBe(500);
    expect(bad.json.code).toBe('MODEL_RUN_FAILED');
    expect(String(bad.json.error)).not.toMatch(/reshape_helper|onnxruntime|\//);
    expect((await post(`${url}/predict`, [1, 2, 3, 4, 5, 6])).json).toEqual([
      [1, 2, 3],
      [4, 5, 6],
    ]);
    await new Promise((r) => setTimeout(r, 300));
    server.child.kill('SIGTERM');
    const { stdout } = await server.done;
    expect(stdout).toMatch(/"code":"MODEL_RUN_FAILED"|The input tensor cannot be reshaped/);
    expect(stdout).toContain('cannot be reshaped');
  }, 60_000);

  it('/livez answers while the only instance is busy with queued model calls', async () => {
    const url = await serveModel([writeDense(dir, 1024), '--no-batching', '--threads', '1']);
    const rows = JSON.stringify(
      Array.from({ length: 64 }, () => Array.from({ length: 1024 }, (_, i) => (i % 7) / 7)),
    );
    let pending = 24;
    const calls = Array.from({ length: pending }, () =>
      fetch(`${url}/predict`, { method: 'POST', body: rows }).then((r) => {
        pending--;
        return r.status;
      }),
    );
    await new Promise((r) => setTimeout(r, 100));
    const live = await fetch(`${url}/livez`);
    // Answered while model calls were still queued behind the busy instance.
    const stillPending = pending;
    expect(live.status).toBe(200);
    expect(await Promise.all(calls)).toEqual(Array(24).fill(200));
    expect(stillPending).toBeGreaterThan(0);
  }, 60_000);
});

describe('tiffin models import / export / delete round trip', () => {
  it('imports a model file under a name, exports it, deletes it and imports the archive back', async () => {
    const run = async (args: string[]) => await spawnTiffin(args, { TIFFIN_HOME: home }).done;
    const saved = await run(['models', 'import', writeLinear(dir, 'rt.onnx'), '--name', 'rt']);
    const tag = /Saved model (rt:\S+)/.exec(saved.stdout)![1]!;
    const list = await run(['models', 'list', '-o', 'json']);
    expect(JSON.parse(list.stdout)).toEqual(
      expect.arrayContaining([expect.objectContaining({ tag, module: 'onnx' })]),
    );
    const archive = join(dir, 'rt.tar.gz');
    expect((await run(['models', 'export', tag, archive])).code).toBe(0);
    expect((await run(['models', 'delete', tag])).code).toBe(0);
    expect((await run(['models', 'import', archive])).stdout).toContain(`Imported model ${tag}`);
    const garbage = join(dir, 'garbage.onnx');
    await writeFile(garbage, 'not a model');
    const refused = await run(['models', 'import', garbage, '--name', 'garbage']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/'garbage.onnx' is not an ONNX model ONNX Runtime can load/);
    expect((await run(['models', 'list', 'garbage', '-o', 'json'])).stdout.trim()).toBe('[]');
  }, 120_000);
});

describe('tiffin build model.onnx', () => {
  it('packages the model with its zero-code service; serving the package answers /predict', async () => {
    const built = await spawnTiffin(['build', writeLinear(dir, 'packaged.onnx'), '--no-lockfile'], {
      TIFFIN_HOME: home,
    }).done;
    expect(built.stdout).toMatch(/Successfully built package packaged:\S+/);
    const server = spawnTiffin(['serve', 'packaged:latest', '--port', '0'], { TIFFIN_HOME: home });
    servers.processes.push(server);
    const url = await server.url;
    const x = [[2, 0, 1, 1]];
    const res = await post(`${url}/predict`, x);
    expect(res.status).toBe(200);
    expectClose(res.json, linearExpected(x));
  }, 120_000);
});
