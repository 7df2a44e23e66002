import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from './grpc-clients.js';
import { ModelServers } from './model-servers.js';
import { type IndexRow, index, predict, rowOf, until, v2, v2Grpc, writeScale } from './repository-clients.js';

/** `tiffin serve DIR` on a model repository, driven as a user drives Triton's: HTTP, v2 and gRPC (docs/model-repository.md). */

const servers = new ModelServers();

beforeAll(() => servers.open('tiffin-repository-'));
afterAll(() => servers.close());

describe('tiffin serve DIR --model-control poll: a folder of models changed while serving', () => {
  let url: string;
  let rpc: ReturnType<typeof v2Grpc>;
  let repo: string;

  beforeAll(async () => {
    repo = join(servers.dir, 'poll');
    mkdirSync(join(repo, 'triple', '1'), { recursive: true });
    writeScale(join(repo, 'double.onnx'), 2);
    writeScale(join(repo, 'half.onnx'), 0.5);
    writeScale(join(repo, 'triple', '1', 'model.onnx'), 3);
    writeFileSync(join(repo, 'triple', 'tiffin-model.json'), JSON.stringify({ batching: false }));
    writeFileSync(join(repo, 'broken.onnx'), 'not a model');
    writeScale(join(repo, 'caf\u00e9.onnx'), 1);
    const port = await freePort();
    url = await servers.serve([repo, '--model-control', 'poll', '--grpc', '--grpc-port', String(port)]);
    rpc = v2Grpc(port);
  }, 60_000);

  it('serves every model under its name over HTTP, v2 JSON and gRPC; the index says why the others are not', async () => {
    expect(await predict(url, 'double')).toEqual({ status: 200, json: [[2, 4]] as never });
    expect((await predict(url, 'half')).json).toEqual([[0.5, 1]]);
    expect((await predict(url, 'triple')).json).toEqual([[3, 6]]);
    // What the typed client (@tiffin/client) reads: one API per model of the folder.
    const docs = (await (await fetch(`${url}/docs.json`)).json()) as {
      paths: Record<string, { post?: { 'x-tiffin-name'?: string } }>;
    };
    const apis = Object.entries(docs.paths).map(([path, ops]) => [ops.post?.['x-tiffin-name'], path]);
    expect(apis.filter(([name]) => name !== undefined)).toEqual([
      ['double', '/double/predict'],
      ['half', '/half/predict'],
      ['triple', '/triple/predict'],
    ]);
    const infer = await v2(url, 'triple');
    expect((infer.json.outputs as Array<{ data: number[] }>)[0]!.data).toEqual([3, 6]);
    const rows = await index(url);
    expect(rows.map((r) => [r.name, r.version, r.state])).toEqual([
      ['broken', '', 'UNAVAILABLE'],
      ['caf\u00e9', '', 'UNAVAILABLE'],
      ['double', '', 'READY'],
      ['half', '', 'READY'],
      ['triple', '1', 'READY'],
    ]);
    expect(rows[0]!.reason).toMatch(/failed to load 'broken'/);
    expect(rows[1]!.reason).toMatch(/not a model name/);
    expect((await index(url, { ready: true })).map((r) => r.name)).toEqual(['double', 'half', 'triple']);
    const grpcIndex = (await rpc.index({ ready: true })) as { models: IndexRow[] };
    expect(grpcIndex.models.map((m) => m.name)).toEqual(['double', 'half', 'triple']);
  });

  it('a changed file is reloaded; a broken one keeps the serving model and says why; a removed one unloads', async () => {
    writeScale(join(repo, 'double.onnx'), 4);
    const changed = await (async () => {
      for (let i = 0; i < 200; i++) {
        const res = await predict(url, 'double');
        if ((res.json as unknown as number[][])[0]![0] === 4) return res.json;
        await new Promise((r) => setTimeout(r, 100));
      }
      return (await predict(url, 'double')).json;
    })();
    expect(changed).toEqual([[4, 8]]);

    writeFileSync(join(repo, 'half.onnx'), 'truncated');
    const kept = await until(url, 'half', (r) => (r?.reason ?? '') !== '');
    expect(kept?.state).toBe('READY');
    expect(kept?.reason).toMatch(/failed to load 'half'.*still serves/);
    expect((await predict(url, 'half')).json).toEqual([[0.5, 1]]);

    rmSync(join(repo, 'triple'), { recursive: true });
    const gone = await until(url, 'triple', (r) => r?.state === 'UNAVAILABLE');
    expect(gone?.reason).toBe('removed from the repository');
    const refused = await predict(url, 'triple');
    expect([refused.status, refused.json.code]).toEqual([503, 'MODEL_NOT_LOADED']);
    expect((await fetch(`${url}/v2/models/triple/ready`)).status).toBe(503);

    // A file added while serving loads on its own and is served under its name on every transport.
    writeScale(join(repo, 'late.onnx'), 5);
    const late = await until(url, 'late', (r) => r?.state === 'READY');
    expect([late?.state, late?.reason]).toEqual(['READY', '']);
    expect((await predict(url, 'late')).json).toEqual([[5, 10]]);
    const lateGrpc = (await rpc.infer({
      model_name: 'late',
      inputs: [{ name: 'x', datatype: 'FP32', shape: [1, 2], contents: { fp32_contents: [1, 2] } }],
    })) as { outputs: Array<{ contents: { fp32_contents: number[] } }> };
    expect(lateGrpc.outputs[0]!.contents.fp32_contents).toEqual([5, 10]);
    rmSync(join(repo, 'late.onnx'));
    expect((await until(url, 'late', (r) => r?.state === 'UNAVAILABLE'))?.reason).toBe(
      'removed from the repository',
    );
  });

  it('loads and unloads through the repository API over HTTP and gRPC; hostile names are 4xx', async () => {
    writeScale(join(repo, 'half.onnx'), 0.25);
    // Poll may reload it first; the explicit load reads the folder as it is either way.
    expect((await fetch(`${url}/v2/repository/models/half/load`, { method: 'POST' })).status).toBe(200);
    expect((await predict(url, 'half')).json).toEqual([[0.25, 0.5]]);
    const unload = await fetch(`${url}/v2/repository/models/half/unload`, {
      method: 'POST',
      body: JSON.stringify({ parameters: { unload_dependents: true } }),
    });
    expect(unload.status).toBe(200);
    expect((await rowOf(url, 'half'))?.state).toBe('UNAVAILABLE');
    expect((await fetch(`${url}/v2/models/half/ready`)).status).toBe(503);
    expect(((await rpc.ready({ name: 'half' })) as { ready: boolean }).ready).toBe(false);
    await rpc.load({ model_name: 'half' });
    expect(((await rpc.ready({ name: 'half' })) as { ready: boolean }).ready).toBe(true);
    expect((await v2(url, 'half')).status).toBe(200);
    await rpc.unload({ model_name: 'half', parameters: { unload_dependents: { bool_param: true } } });
    expect((await rowOf(url, 'half'))?.state).toBe('UNAVAILABLE');
    await expect(rpc.load({ model_name: '../x' })).rejects.toMatchObject({ code: grpc.status.NOT_FOUND });
    await expect(rpc.load({ model_name: 'broken' })).rejects.toMatchObject({
      code: grpc.status.INVALID_ARGUMENT,
    });

    for (const name of ['..%2Fx', encodeURIComponent('caf\u00e9'), 'x'.repeat(5000), 'nope']) {
      const res = await fetch(`${url}/v2/repository/models/${name}/load`, { method: 'POST' });
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(res.status).toBeLessThan(500);
      expect(((await res.json()) as { code: string }).code).toMatch(/^[A-Z_]+$/);
    }
    const bad = await fetch(`${url}/v2/repository/index`, { method: 'POST', body: '{"ready": "yes"}' });
    expect(bad.status).toBe(400);
  });
});

describe('tiffin serve DIR --max-loaded-models 1: a budget smaller than the models', () => {
  it('evicts the idle model, loads the one called on its call, and counts loads and evictions per model', async () => {
    const repo = join(servers.dir, 'budget');
    mkdirSync(repo);
    writeScale(join(repo, 'a.onnx'), 2);
    writeScale(join(repo, 'b.onnx'), 3);
    const url = await servers.serve([repo, '--max-loaded-models', '1']);
    const calls = await Promise.all([predict(url, 'a'), predict(url, 'a'), predict(url, 'b')]);
    expect(calls.map((c) => c.json)).toEqual([[[2, 4]], [[2, 4]], [[3, 6]]]);
    expect((await predict(url, 'a')).json).toEqual([[2, 4]]);
    const states = (await index(url)).map((r) => r.state);
    expect(states.filter((s) => s === 'READY')).toHaveLength(1);
    expect((await fetch(`${url}/v2/models/b/ready`)).status).toBe(200);
    const metrics = await (await fetch(`${url}/metrics`)).text();
    expect(metrics).toMatch(/tiffin_api_server_model_evictions_total\{[^}]*model="b"/);
    expect(metrics).toMatch(/tiffin_api_server_model_loads_total\{[^}]*model="a"[^}]*\} [2-9]/);
    expect(metrics).toMatch(/tiffin_api_server_model_resident_bytes\{[^}]*model="a"[^}]*\} [1-9]/);
  }, 60_000);

  it('with --model-control none the control API answers that model control is off', async () => {
    const repo = join(servers.dir, 'budget');
    const url = await servers.serve([repo, '--model-control', 'none', '--model', 'a']);
    const res = await fetch(`${url}/v2/repository/models/a/unload`, { method: 'POST' });
    expect([res.status, ((await res.json()) as { code: string }).code]).toEqual([
      400,
      'MODEL_CONTROL_DISABLED',
    ]);
    expect((await index(url)).map((r) => r.name)).toEqual(['a']);
  }, 60_000);
});
