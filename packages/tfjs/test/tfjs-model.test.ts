import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs';
import { ModelStore, NDArray, topK } from '@tiffin/core';
import { imageToTensor, TiffinImage } from '@tiffin/io-image';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  inspectTfjs,
  loadModel,
  readModelFolder,
  saveModel,
  selectTfjsBackend,
  type TfjsModel,
} from '../src/index.js';
import { openTfjsModel } from '../src/tfjs-model.js';
import {
  EMOTION_MODEL as EMOTION,
  EMOTIONS,
  graphScores,
  irisLikeLayersModel,
  LIVENESS_MODEL,
  twoHeadedLayersModel,
  writeGraphModel,
  writeLayersModel,
} from './fixtures/test-models.js';

let dir: string;
let store: ModelStore;
const opened: TfjsModel[] = [];

beforeAll(async () => {
  await selectTfjsBackend();
  dir = mkdtempSync(join(tmpdir(), 'tiffin-tfjs-'));
  store = new ModelStore(join(dir, 'store'));
});
afterAll(async () => {
  await Promise.all(opened.map((m) => m.close()));
  rmSync(dir, { recursive: true, force: true });
});

async function open(tagOrPath: string, options: Parameters<typeof loadModel>[1] = {}): Promise<TfjsModel> {
  const model = await loadModel(tagOrPath, { store, instances: 1, ...options });
  opened.push(model);
  return model;
}

function close(a: ArrayLike<number>, b: ArrayLike<number>, digits = 5): void {
  expect(a.length).toBe(b.length);
  for (let i = 0; i < b.length; i++) expect(a[i]).toBeCloseTo(b[i]!, digits);
}

describe('saveModel: the signature is read from model.json', () => {
  it('stores a LayersModel folder under module tfjs with names, dtypes, dynamic batch and batchability', async () => {
    const folder = await writeLayersModel(dir, 'two-headed', twoHeadedLayersModel());
    const tag = await saveModel('two-headed', folder, {
      store,
      classes: ['x'],
      metadata: { source: 'test' },
    });
    expect(tag).toMatch(/^two-headed:[a-z0-9]+$/);
    const stored = await store.get('two-headed:latest');
    expect(stored.manifest.module).toBe('tfjs');
    const model = await open(tag);
    expect(model.signature).toEqual({
      inputs: [
        { name: 'features', dtype: 'float32', shape: [-1, 3] },
        { name: 'counts', dtype: 'int32', shape: [-1, 2] },
      ],
      outputs: [
        { name: 'score', dtype: 'float32', shape: [-1, 1] },
        { name: 'embedding', dtype: 'float32', shape: [-1, 4] },
      ],
      batchable: true,
      batch_dim: 0,
    });
    expect(model.metadata).toEqual({ source: 'test' });
  });

  it('saves an in-memory LayersModel, and a GraphModel whose output shapes only a trial run tells', async () => {
    const tag = await saveModel('iris-like', irisLikeLayersModel(), { store, classes: ['a', 'b', 'c'] });
    const model = await open(tag);
    expect(model.classes).toEqual(['a', 'b', 'c']);
    expect(model.signature.inputs).toEqual([{ name: 'hidden_input', dtype: 'float32', shape: [-1, 4] }]);
    const emotion = await inspectTfjs(EMOTION, undefined);
    expect(emotion.files.kind).toBe('graph');
    expect(emotion.signature).toMatchObject({
      inputs: [{ name: 'input_1', dtype: 'float32', shape: [-1, 64, 64, 1] }],
      outputs: [{ name: 'Identity', dtype: 'float32', shape: [-1, 7] }],
      batchable: true,
    });
  });

  it('a fixed batch is not batchable; overrides change shapes and batchability', async () => {
    const fixed = await inspectTfjs(writeGraphModel(dir, 'fixed', 2), undefined);
    expect(fixed.signature).toMatchObject({
      batchable: false,
      inputs: [{ shape: [2, 4] }, { shape: [2, 2] }],
    });
    const graph = writeGraphModel(dir, 'graph-override');
    const over = await inspectTfjs(graph, { batchable: false, inputs: { x: { shape: [1, 4] } } });
    expect(over.signature.batchable).toBe(false);
    expect(over.signature.inputs[0]!.shape).toEqual([1, 4]);
    await expect(inspectTfjs(graph, { inputs: { nope: { shape: [1] } } })).rejects.toThrow(
      /override names input 'nope'/,
    );
  });

  it('refuses broken folders with a clear message and leaves the store untouched', async () => {
    const before = readdirSync(join(dir, 'store'), { recursive: true });
    const cases: [string, (folder: string) => void, RegExp][] = [
      [
        'not-json',
        (f) => writeFileSync(join(f, 'model.json'), '{"modelTopology": '),
        /model.json is not JSON/,
      ],
      [
        'truncated',
        (f) => writeFileSync(join(f, 'group1-shard1of1.bin'), new Uint8Array(10)),
        /hold 10 bytes, the manifest declares 64/,
      ],
      [
        'missing-shard',
        (f) => rmSync(join(f, 'group1-shard1of1.bin')),
        /weight file 'group1-shard1of1.bin' is missing/,
      ],
      [
        'escape',
        (f) => rewrite(f, (j) => (j.weightsManifest[0]!.paths = ['../../etc/passwd'])),
        /outside the model's folder/,
      ],
      ['no-topology', (f) => rewrite(f, (j) => delete j.modelTopology), /has no modelTopology/],
      [
        'unknown-op',
        (f) => rewrite(f, (j) => (j.modelTopology!.node[7]!.op = 'NoSuchOp')),
        /operation TensorFlow.js cannot run/,
      ],
      [
        'huge-dims',
        (f) => rewrite(f, (j) => (j.weightsManifest[0]!.weights[0]!.shape = [1e9, 1e9])),
        /manifest declares/,
      ],
    ];
    for (const [name, breakIt, message] of cases) {
      const folder = writeGraphModel(dir, `broken-${name}`);
      breakIt(folder);
      await expect(saveModel(name, folder, { store }), name).rejects.toMatchObject({
        message: expect.stringMatching(message),
        httpStatus: 400,
      });
    }
    await expect(saveModel('nothing', join(dir, 'nowhere'), { store })).rejects.toThrow(
      /no such file or folder/,
    );
    expect(readdirSync(join(dir, 'store'), { recursive: true })).toEqual(before);
  });
});

/** The parts of a GraphModel's model.json the broken-folder cases change. */
interface GraphJson {
  modelTopology?: { node: { op: string }[] };
  weightsManifest: { paths: string[]; weights: { shape: number[] }[] }[];
}

function rewrite(folder: string, change: (json: GraphJson) => void): void {
  const path = join(folder, 'model.json');
  const json = JSON.parse(readFileSync(path, 'utf8')) as GraphJson;
  change(json);
  writeFileSync(path, JSON.stringify(json));
}

describe('loadModel: run by name in worker threads', () => {
  it('runs a LayersModel and matches tfjs run directly in this thread', async () => {
    const source = irisLikeLayersModel();
    const model = await open(await writeLayersModel(dir, 'iris-direct', source));
    expect(model.name).toBe('iris-direct');
    const x = [
      [5.1, 3.5, 1.4, 0.2],
      [6.7, 3.0, 5.2, 2.3],
    ];
    const out = await model.run({ hidden_input: NDArray.from(x, 'float32') });
    const expected = (source.predict(tf.tensor(x)) as tf.Tensor).dataSync();
    expect(out.probabilities!.shape).toEqual([2, 3]);
    close(out.probabilities!.data as Float32Array, expected);
  });

  it('runs several named inputs and outputs of a GraphModel, int32 exact, on two instances', async () => {
    const model = await open(writeGraphModel(dir, 'graph-run'), { instances: 2 });
    const x = [
      [1, 2, 3, 4],
      [-1, 0.5, 0, 2],
      [0, 0, 0, 0],
    ];
    const ids = [
      [1, -7],
      [2 ** 30, 3],
      [0, 5],
    ];
    const calls = await Promise.all(
      [0, 1, 2, 3].map(() => model.run({ x: NDArray.from(x, 'float32'), ids: NDArray.from(ids, 'int32') })),
    );
    for (const out of calls) {
      close(out.scores!.data as Float32Array, graphScores(x).flat());
      expect(out.doubled!.dtype).toBe('int32');
      expect(Array.from(out.doubled!.data as Int32Array)).toEqual(ids.flat().map((v) => (v * 2) | 0));
    }
  });

  it('serves a real converted GraphModel: Image → tensor → model → top-k labels, as tfjs computes it', async () => {
    const model = await open(await saveModel('emotion', EMOTION, { store, classes: EMOTIONS }));
    const pixels = Uint8Array.from({ length: 96 * 80 * 3 }, (_, i) => (i * 37) % 256);
    const image = new TiffinImage({ width: 96, height: 80, mode: 'RGB', data: pixels });
    const input = await imageToTensor(image, {
      size: { width: 64, height: 64 },
      channels: 'L',
      layout: 'nhwc',
      mean: 0.5,
      std: 0.5,
    });
    const out = await model.run({ input_1: input });
    const direct = await tf.loadGraphModel(
      tf.io.fromMemory((await inspectTfjs(EMOTION, undefined)).files.artifacts),
    );
    const expected = (
      direct.execute(tf.tensor(input.data as Float32Array, [...input.shape])) as tf.Tensor
    ).dataSync();
    close(out.Identity!.data as Float32Array, expected);
    const [best] = topK(out.Identity!, model.classes, { k: 3 });
    expect(best!.map((b) => b.label).every((l) => EMOTIONS.includes(l))).toBe(true);
    expect(best![0]!.score).toBeGreaterThanOrEqual(best![1]!.score);
    const total = Array.from(out.Identity!.data as Float32Array).reduce((a, b) => a + b, 0);
    expect(total).toBeCloseTo(1, 4);
  });

  it("serves a converted GraphModel's output under the name its model.json gives it, as tfjs computes it", async () => {
    const { signature } = await inspectTfjs(LIVENESS_MODEL, undefined);
    expect(signature.outputs).toEqual([{ name: 'activation_6', dtype: 'float32', shape: [-1, 2] }]);
    expect(signature.inputs.map((t) => t.name)).toEqual(['conv2d_1_input']);
    const model = await open(LIVENESS_MODEL);
    const pixels = Float32Array.from({ length: 32 * 32 * 3 }, (_, i) => ((i * 37) % 256) / 255);
    const out = await model.run({ conv2d_1_input: new NDArray(pixels, [1, 32, 32, 3], 'float32') });
    expect(Object.keys(out)).toEqual(['activation_6']);
    const direct = await tf.loadGraphModel(
      tf.io.fromMemory((await inspectTfjs(LIVENESS_MODEL, undefined)).files.artifacts),
    );
    const expected = direct.execute(tf.tensor(pixels, [1, 32, 32, 3]), 'Identity') as tf.Tensor;
    close(out.activation_6!.data as Float32Array, expected.dataSync(), 5);
    expected.dispose();
    direct.dispose();
  });

  it('frees every tensor a call makes (a long-running server does not grow)', async () => {
    const model = await openTfjsModel(await readModelFolder(writeGraphModel(dir, 'graph-leak')));
    const feeds = () => ({
      x: NDArray.from([[1, 2, 3, 4]], 'float32'),
      ids: NDArray.from([[1, 2]], 'int32'),
    });
    await model.run(feeds());
    const before = tf.memory().numTensors;
    for (let i = 0; i < 20; i++) await model.run(feeds());
    expect(tf.memory().numTensors).toBe(before);
    await model.close();
  });

  it('refuses an unknown backend name before starting threads', async () => {
    await expect(loadModel(EMOTION, { executionProviders: ['cuda'] })).rejects.toThrow(
      /Unknown TensorFlow.js backend 'cuda'.*tensorflow-gpu, tensorflow, wasm, cpu/,
    );
  });
});
