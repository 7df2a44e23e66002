import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnTiffin } from './cli-process.js';
import { freePort } from './grpc-clients.js';
import { ModelServers } from './model-servers.js';
import { index, predict, rowOf, v2, v2Grpc, writeScale } from './repository-clients.js';

/**
 * Models copied into a repository folder while `tiffin serve DIR` runs (explicit model control, the default):
 * listed by the index, loaded by name over HTTP and gRPC and served from then on (docs/model-repository.md).
 */

const servers = new ModelServers();

beforeAll(() => servers.open('tiffin-repository-added-'));
afterAll(() => servers.close());

const load = (url: string, name: string) =>
  fetch(`${url}/v2/repository/models/${name}/load`, { method: 'POST' });

describe('tiffin serve DIR: a model added while serving', () => {
  let url: string;
  let rpc: ReturnType<typeof v2Grpc>;
  let repo: string;

  beforeAll(async () => {
    repo = join(servers.dir, 'explicit');
    mkdirSync(repo);
    writeScale(join(repo, 'double.onnx'), 2);
    const port = await freePort();
    // The flag makes a folder of one model a repository (without it, one .onnx file is served at /predict).
    url = await servers.serve([repo, '--model-control', 'explicit', '--grpc', '--grpc-port', String(port)]);
    rpc = v2Grpc(port);
  }, 60_000);

  it('is listed UNAVAILABLE until loaded, then served over HTTP, v2 JSON, gRPC and the API page', async () => {
    writeScale(join(repo, 'triple.onnx'), 3);
    const before = await rowOf(url, 'triple');
    expect(before?.state).toBe('UNAVAILABLE');
    expect(before?.reason).toMatch(/not loaded: POST \/v2\/repository\/models\/<name>\/load/);
    expect((await predict(url, 'triple')).status).toBe(404);

    expect((await load(url, 'triple')).status).toBe(200);
    expect(await rowOf(url, 'triple')).toEqual({ name: 'triple', version: '', state: 'READY', reason: '' });
    expect((await predict(url, 'triple')).json).toEqual([[3, 6]]);
    expect((await v2(url, 'triple')).json.outputs).toMatchObject([{ data: [3, 6] }]);
    expect((await fetch(`${url}/v2/models/triple/ready`)).status).toBe(200);
    const docs = (await (await fetch(`${url}/docs.json`)).json()) as { paths: Record<string, unknown> };
    expect(Object.keys(docs.paths)).toEqual(expect.arrayContaining(['/double/predict', '/triple/predict']));
    // The model served before keeps answering.
    expect((await predict(url, 'double')).json).toEqual([[2, 4]]);
  });

  it('loads a Triton-layout folder through gRPC RepositoryModelLoad; concurrent loads share one', async () => {
    mkdirSync(join(repo, 'tenfold', '1'), { recursive: true });
    writeScale(join(repo, 'tenfold', '1', 'model.onnx'), 10);
    const grpcIndex = (await rpc.index({})) as { models: Array<{ name: string; state: string }> };
    expect(grpcIndex.models.find((m) => m.name === 'tenfold')?.state).toBe('UNAVAILABLE');
    await Promise.all([rpc.load({ model_name: 'tenfold' }), rpc.load({ model_name: 'tenfold' })]);
    expect(((await rpc.ready({ name: 'tenfold' })) as { ready: boolean }).ready).toBe(true);
    const inferred = (await rpc.infer({
      model_name: 'tenfold',
      inputs: [{ name: 'x', datatype: 'FP32', shape: [1, 2], contents: { fp32_contents: [1, 2] } }],
    })) as { outputs: Array<{ contents: { fp32_contents: number[] } }> };
    expect(inferred.outputs[0]!.contents.fp32_contents).toEqual([10, 20]);
    expect((await rowOf(url, 'tenfold'))?.version).toBe('1');
    const metrics = await (await fetch(`${url}/metrics`)).text();
    expect(metrics).toMatch(/tiffin_api_server_model_loads_total\{[^}]*model="tenfold"[^}]*\} 1\n/);
  });

  it('a broken new file answers 400 with the cause; fixed, it loads; an unknown name is a 404', async () => {
    writeFileSync(join(repo, 'late.onnx'), 'half a copy');
    const broken = await load(url, 'late');
    expect([broken.status, ((await broken.json()) as { code: string }).code]).toEqual([
      400,
      'MODEL_LOAD_FAILED',
    ]);
    expect((await rowOf(url, 'late'))?.reason).toMatch(/failed to load 'late'/);
    expect((await predict(url, 'late')).status).toBe(404);
    writeScale(join(repo, 'late.onnx'), 7);
    expect((await load(url, 'late')).status).toBe(200);
    expect((await predict(url, 'late')).json).toEqual([[7, 14]]);

    const unknown = await load(url, 'nowhere');
    expect([unknown.status, ((await unknown.json()) as { code: string }).code]).toEqual([
      404,
      'MODEL_NOT_IN_REPOSITORY',
    ]);
    await expect(rpc.load({ model_name: 'nowhere' })).rejects.toMatchObject({ code: grpc.status.NOT_FOUND });
    expect((await index(url, { ready: true })).map((r) => r.name)).toEqual([
      'double',
      'late',
      'tenfold',
      'triple',
    ]);
  });
});

describe('tiffin serve DIR --max-loaded-models 1: a model added while serving', () => {
  it('loads within the budget, evicting the idle one, which loads again on its next call', async () => {
    const repo = join(servers.dir, 'budget');
    mkdirSync(repo);
    writeScale(join(repo, 'a.onnx'), 2);
    const url = await servers.serve([repo, '--max-loaded-models', '1']);
    expect((await predict(url, 'a')).json).toEqual([[2, 4]]);
    writeScale(join(repo, 'b.onnx'), 3);
    expect((await load(url, 'b')).status).toBe(200);
    expect((await rowOf(url, 'a'))?.state).toBe('UNAVAILABLE');
    expect((await predict(url, 'b')).json).toEqual([[3, 6]]);
    expect((await predict(url, 'a')).json).toEqual([[2, 4]]);
    expect((await index(url, { ready: true })).map((r) => r.name)).toEqual(['a']);
  }, 60_000);
});

describe('tiffin serve onnx:a onnx:b: store tags served as a repository', () => {
  const save = async (file: string, name: string) => {
    const done = await spawnTiffin(['models', 'import', file, '--name', name], { TIFFIN_HOME: servers.home })
      .done;
    expect(done.stdout).toMatch(new RegExp(`Saved model ${name}:\\S+ \\(module onnx\\)`));
  };

  it('serves each tag under its store name; a load takes the newest version of a latest tag', async () => {
    const files = join(servers.dir, 'to-import');
    mkdirSync(files);
    writeScale(join(files, 'a.onnx'), 2);
    writeScale(join(files, 'b.onnx'), 3);
    await save(join(files, 'a.onnx'), 'alpha');
    await save(join(files, 'b.onnx'), 'beta');
    const url = await servers.serve([
      'onnx:alpha',
      'onnx:beta:latest',
      'onnx:gamma',
      '--max-loaded-models',
      '2',
    ]);
    expect((await predict(url, 'alpha')).json).toEqual([[2, 4]]);
    expect((await v2(url, 'beta')).json.outputs).toMatchObject([{ data: [3, 6] }]);
    const rows = await index(url);
    expect(rows.map((r) => [r.name, r.state])).toEqual([
      ['alpha', 'READY'],
      ['beta', 'READY'],
      ['gamma', 'UNAVAILABLE'],
    ]);
    expect(rows[2]!.reason).toMatch(/not in the model store/);

    // A newer save of alpha: the load reads the store again and serves it.
    writeScale(join(files, 'a.onnx'), 4);
    await save(join(files, 'a.onnx'), 'alpha');
    expect((await load(url, 'alpha')).status).toBe(200);
    expect((await predict(url, 'alpha')).json).toEqual([[4, 8]]);
    expect((await load(url, 'delta')).status).toBe(404);
  }, 90_000);

  it('refuses several arguments that are not all store tags', async () => {
    const done = await spawnTiffin(['serve', 'onnx:alpha', 'service.ts', '--port', '0'], {
      TIFFIN_HOME: servers.home,
    }).done;
    expect(done.code).not.toBe(0);
    expect(done.stderr).toMatch(/several arguments must all be store tags/);
  });
});
