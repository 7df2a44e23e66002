import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BadInput, ModelStore, NDArray, NumpyNdarray, Service, serve, silentLogger } from '@tiffin/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadModel, type OnnxModel, saveModel } from '../src/index.js';
import {
  linearExpected,
  multiExpected,
  writeFixed,
  writeLinear,
  writeMulti,
  writeRegroup,
} from './fixtures/test-models.js';

let dir: string;
let store: ModelStore;
const opened: OnnxModel[] = [];

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'tiffin-onnx-'));
  store = new ModelStore(join(dir, 'store'));
});
afterAll(async () => {
  await Promise.all(opened.map((m) => m.close()));
  rmSync(dir, { recursive: true, force: true });
});

async function open(tagOrPath: string, options: Parameters<typeof loadModel>[1] = {}): Promise<OnnxModel> {
  const model = await loadModel(tagOrPath, { store, instances: 1, ...options });
  opened.push(model);
  return model;
}

function close(a: ArrayLike<number>, b: readonly number[]): void {
  expect(a.length).toBe(b.length);
  for (let i = 0; i < b.length; i++) expect(a[i]).toBeCloseTo(b[i]!, 5);
}

describe('saveModel: the signature is read from the graph', () => {
  it('stores name:version under module onnx with inputs, outputs, dtypes, dynamic dims and batchability', async () => {
    const tag = await saveModel('multi', writeMulti(dir), {
      store,
      labels: { team: 'ml' },
      classes: ['a', 'b', 'c'],
      metadata: { epochs: 3 },
    });
    expect(tag).toMatch(/^multi:[a-z0-9]+$/);
    const stored = await store.get('multi:latest');
    expect(stored.manifest.module).toBe('onnx');
    expect(stored.manifest.labels).toEqual({ team: 'ml' });
    const sig = (stored.manifest.metadata as { signature: { inputs: unknown[]; batchable: boolean } })
      .signature;
    expect(sig.batchable).toBe(true);
    expect(sig.inputs).toEqual([
      { name: 'x', dtype: 'float32', shape: [-1, 4], dimNames: ['batch', null] },
      { name: 'ids', dtype: 'int64', shape: [-1, 2], dimNames: ['batch', null] },
      { name: 'state', dtype: 'float32', shape: [-1, 8], dimNames: ['batch', null] },
    ]);
    const model = await open(tag);
    expect(model.classes).toEqual(['a', 'b', 'c']);
    expect(model.metadata).toEqual({ epochs: 3 });
    expect(model.signature.outputs.map((o) => `${o.name}:${o.dtype}`)).toEqual([
      'scores:float32',
      'next_ids:int64',
      'next_state:float32',
    ]);
  });

  it('a fixed first dimension is not batchable; overrides change dtype, shape and batchability', async () => {
    const tag = await saveModel('fixed', writeFixed(dir), { store });
    expect((await open(tag)).signature).toMatchObject({ batchable: false, inputs: [{ shape: [2, 4] }] });
    const linear = writeLinear(dir);
    const overridden = await saveModel('linear-nobatch', linear, {
      store,
      signatures: { batchable: false, inputs: { x: { shape: [1, 4] } } },
    });
    const m = await open(overridden);
    expect(m.signature.batchable).toBe(false);
    expect(m.signature.inputs[0]!.shape).toEqual([1, 4]);
    await expect(
      saveModel('bad', linear, { store, signatures: { inputs: { nope: { shape: [1] } } } }),
    ).rejects.toThrow(/override names input 'nope'.*x/);
  });

  it('refuses a corrupt, truncated or non-ONNX file with a clear message and leaves the store untouched', async () => {
    const before = readdirSync(join(dir, 'store'));
    const garbage = join(dir, 'garbage.onnx');
    writeFileSync(garbage, 'this is not a model');
    await expect(saveModel('garbage', garbage, { store })).rejects.toMatchObject({
      code: 'ONNX_MODEL_INVALID',
      message: expect.stringMatching(/'garbage.onnx' is not an ONNX model ONNX Runtime can load/),
    });
    const whole = new Uint8Array(readFileSync(writeLinear(dir, 'whole.onnx')));
    await expect(saveModel('cut', whole.subarray(0, whole.length - 20), { store })).rejects.toMatchObject({
      code: 'ONNX_MODEL_INVALID',
    });
    await expect(saveModel('missing', join(dir, 'nope.onnx'), { store })).rejects.toThrow(/No ONNX model/);
    expect(readdirSync(join(dir, 'store'))).toEqual(before);
  });
});

describe('loadModel: run by name in worker threads', () => {
  it('runs one input/one output and matches the math', async () => {
    const model = await open(writeLinear(dir, 'l2.onnx'));
    expect(model.tag).toBeUndefined();
    expect(model.name).toBe('l2');
    const x = [
      [1, 2, 3, 4],
      [-1, 0.5, 0, 2],
    ];
    const out = await model.run({ x: NDArray.from(x, 'float32') });
    expect(out.y!.shape).toEqual([2, 3]);
    close(out.y!.data as Float32Array, linearExpected(x).flat());
  });

  it('instances 0 runs the model on the calling thread: same answers, no worker thread', async () => {
    // OS threads of this process: a runner instance is a worker thread (plus its runtime's), inline adds only
    // what an ONNX Runtime session starts on any thread.
    const threads = () => readdirSync('/proc/self/task').length;
    await open(writeLinear(dir, 'warm.onnx'), { instances: 0 });
    let before = threads();
    const inline = await open(writeLinear(dir, 'inline.onnx'), { instances: 0 });
    const inlineThreads = threads() - before;
    expect(inline.instances).toBe(1); // one call at a time
    const x = [
      [1, 2, 3, 4],
      [0, -1, 0.25, 8],
    ];
    const out = await inline.run({ x: NDArray.from(x, 'float32') });
    close(out.y!.data as Float32Array, linearExpected(x).flat());
    before = threads();
    const pooled = await open(writeLinear(dir, 'pooled.onnx'), { instances: 1 });
    expect(threads() - before).toBeGreaterThan(inlineThreads);
    close(
      (await pooled.run({ x: NDArray.from(x, 'float32') })).y!.data as Float32Array,
      linearExpected(x).flat(),
    );
    await expect(open(writeLinear(dir, 'neg.onnx'), { instances: -1 })).rejects.toThrow(
      /instances must be 0 \(run on the event loop\) or a positive integer/,
    );
  });

  it('runs several named inputs and outputs, int64 exact, state carried from call to call', async () => {
    const model = await open(await saveModel('multi2', writeMulti(dir, 'm2.onnx'), { store }), {
      instances: 2,
    });
    expect(model.instances).toBe(2);
    let state: NDArray = NDArray.zeros([1, 8], 'float32');
    const big = 2n ** 60n;
    for (let step = 0; step < 3; step++) {
      const out = await model.run({
        x: NDArray.from([[1, 1, 1, 1]], 'float32'),
        ids: new NDArray(BigInt64Array.from([big, -5n]), [1, 2], 'int64'),
        state,
      });
      expect(out.next_ids!.dtype).toBe('int64');
      expect([...(out.next_ids!.data as BigInt64Array)]).toEqual([big + 1n, -4n]);
      const expected = multiExpected([[1, 1, 1, 1]], [[0, 0]], state.toArray() as number[][]);
      close(out.next_state!.data as Float32Array, expected.next_state.flat());
      state = out.next_state!;
    }
    // 0 → 1 → 1.5 → 1.75
    expect((state.data as Float32Array)[0]).toBeCloseTo(1.75, 6);
  });

  it('a runtime error is a MODEL_RUN_FAILED error that keeps the runtime message for the log, and the pool goes on', async () => {
    const model = await open(writeRegroup(dir));
    const err = (await model
      .run({ x: NDArray.from([1, 2, 3, 4], 'float32') })
      .catch((e: unknown) => e)) as Error & { code: string; toBody(): { error: string } };
    expect(err).toMatchObject({ code: 'MODEL_RUN_FAILED' });
    expect(err.message).toMatch(/Reshape|reshape|shape/i);
    expect(err.toBody().error).not.toMatch(/Reshape/);
    const ok = await model.run({ x: NDArray.from([1, 2, 3, 4, 5, 6], 'float32') });
    expect(ok.y!.shape).toEqual([2, 3]);
  });

  it('a feed the model has no input for, or one left out, is a 400 naming its inputs, from run() and over HTTP', async () => {
    const x = NDArray.from([[1, 2, 3, 4]], 'float32');
    for (const instances of [0, 1]) {
      const model = await open(writeLinear(dir, `feeds-${instances}.onnx`), { instances });
      const unknown = (await model.run({ input: x }).catch((e: unknown) => e)) as BadInput;
      expect(unknown).toBeInstanceOf(BadInput);
      expect(unknown.toBody()).toMatchObject({
        code: 'UNKNOWN_TENSOR',
        detail: { expected: [{ name: 'x', dtype: 'float32' }] },
      });
      expect(unknown.message).toMatch(/has no input named 'input' \(expected x: float32/);
      const missing = (await model.run({}).catch((e: unknown) => e)) as BadInput;
      expect(missing.toBody()).toMatchObject({ code: 'MISSING_TENSOR' });
    }
    // A service of the reader's own calling it with the wrong name: the caller's mistake, a 400, not a 500.
    const model = await open(writeLinear(dir, 'feeds-http.onnx'));
    const svc = new Service('own').api(
      { name: 'classify', input: new NumpyNdarray({ dtype: 'float32' }), output: new NumpyNdarray() },
      async (rows) => (await model.run({ input: rows })).y!,
    );
    const server = await serve(svc, {
      port: 0,
      host: '127.0.0.1',
      handleSignals: false,
      logger: silentLogger,
    });
    try {
      const res = await fetch(`${server.url}/classify`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '[[1, 2, 3, 4]]',
      });
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({
        code: 'UNKNOWN_TENSOR',
        detail: { expected: [{ name: 'x' }] },
      });
    } finally {
      await server.close();
    }
  });

  it('refuses a tag saved by another module', async () => {
    await store.save({ name: 'other', files: { 'a.txt': 'x' }, module: 'custom' });
    await expect(loadModel('other:latest', { store })).rejects.toThrow(
      /saved by module 'custom', not 'onnx'/,
    );
  });
});
