/**
 * Child process for the batching bench: workloads on TensorFlow.js's WebAssembly backend and on onnxruntime,
 * each served twice (batchable with max_batch_size 32 and max_latency_ms 100, and not):
 * - `/dense`, `/dense_one`: one 256×256 float32 layer as a bare `tf.matMul` (y = x·W). Cheap per call: little
 *   fixed cost for a batch to share.
 * - `/mlp`, `/mlp_one`: a Keras-style `tf.sequential` model of four dense 256-wide layers called with
 *   `model.predict`: the layers API's per-call work (input checks, execution plan, a kernel per op and layer)
 *   is the fixed cost users of a model runtime pay on every call, whatever its batch size.
 * - `/mlp_deep`, `/mlp_deep_one`: the same with eight layers, a call costing several times a request's own
 *   handling (HTTP parsing and writing cost the same for every workload and do not shrink with batching).
 * `/costs` answers each function's median cost per call at batch 1 and at batch 32 (measured at start-up) and
 * the batcher's learnt cost of a full batch. Prints its URL on the first stdout line.
 */
import * as tf from '@tensorflow/tfjs';
import '@tensorflow/tfjs-backend-wasm';
import { JSON as JSONDescriptor, NDArray, NumpyNdarray, Service, serve, Text } from '@tiffin/core';
import { ONNX_WIDTH, onnxMlp } from './onnx-mlp.js';

export const WIDTH = 256;
export const LAYERS = 4;
/** The deeper model: more layers, so a call's fixed cost is several times a request's own handling. */
export const DEEP_LAYERS = 8;
export const MAX_BATCH = 32;
export const MAX_LATENCY_MS = 100;

await tf.setBackend('wasm');
await tf.ready();
const W = tf.tidy(() => tf.randomUniform([WIDTH, WIDTH], -1, 1, 'float32', 7));

/** A Keras-style model of `layers` dense WIDTH-wide layers (ReLU between them), fixed seeds. */
function denseStack(layers: number): tf.Sequential {
  const model = tf.sequential();
  for (let i = 0; i < layers; i++) {
    model.add(
      tf.layers.dense({
        units: WIDTH,
        activation: i < layers - 1 ? 'relu' : 'linear',
        kernelInitializer: tf.initializers.glorotUniform({ seed: i + 1 }),
        ...(i === 0 ? { inputShape: [WIDTH] } : {}),
      }),
    );
  }
  return model;
}
const model = denseStack(LAYERS);
const deepModel = denseStack(DEEP_LAYERS);

const onnx = await onnxMlp();

/** Run `f` on the batch as a [rows, WIDTH] tensor; the answer as an NDArray of the same shape. */
async function onRows(x: NDArray, f: (t: tf.Tensor2D) => tf.Tensor): Promise<NDArray> {
  const rows = x.shape[0]!;
  const y = tf.tidy(() => f(tf.tensor2d(x.data as Float32Array, [rows, WIDTH], 'float32')));
  const data = (await y.data()) as Float32Array;
  y.dispose();
  return new NDArray(data, [rows, WIDTH], 'float32');
}

const dense = (x: NDArray) => onRows(x, (t) => tf.matMul(t, W));
const mlp = (x: NDArray) => onRows(x, (t) => model.predict(t) as tf.Tensor);
const mlpDeep = (x: NDArray) => onRows(x, (t) => deepModel.predict(t) as tf.Tensor);

/** Median ms of one call of `fn` on `rows` rows (after a warm-up). */
async function costPerCall(
  fn: (x: NDArray) => Promise<NDArray>,
  rows: number,
  width = WIDTH,
): Promise<number> {
  const x = new NDArray(
    Float32Array.from({ length: rows * width }, (_, i) => ((i * 37) % 101) / 101 - 0.5),
    [rows, width],
    'float32',
  );
  for (let i = 0; i < 20; i++) await fn(x);
  const times: number[] = [];
  for (let i = 0; i < 100; i++) {
    const t0 = performance.now();
    await fn(x);
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  return times[times.length >> 1]!;
}

const measured = {
  dense: { batch1: await costPerCall(dense, 1), batch32: await costPerCall(dense, MAX_BATCH) },
  mlp: { batch1: await costPerCall(mlp, 1), batch32: await costPerCall(mlp, MAX_BATCH) },
  mlp_deep: { batch1: await costPerCall(mlpDeep, 1), batch32: await costPerCall(mlpDeep, MAX_BATCH) },
  onnx_mlp: {
    batch1: await costPerCall(onnx, 1, ONNX_WIDTH),
    batch32: await costPerCall(onnx, MAX_BATCH, ONNX_WIDTH),
  },
};

const input = (width = WIDTH) =>
  new NumpyNdarray({ dtype: 'float32', shape: [-1, width], enforce_shape: true });
const batching = { batchable: true, max_batch_size: MAX_BATCH, max_latency_ms: MAX_LATENCY_MS } as const;
const svc = new Service('bench_batching');
svc.api({ input: input(), output: new NumpyNdarray(), name: 'dense', ...batching }, dense);
svc.api({ input: input(), output: new NumpyNdarray(), name: 'dense_one' }, dense);
svc.api({ input: input(), output: new NumpyNdarray(), name: 'mlp', ...batching }, mlp);
svc.api({ input: input(), output: new NumpyNdarray(), name: 'mlp_one' }, mlp);
svc.api({ input: input(), output: new NumpyNdarray(), name: 'mlp_deep', ...batching }, mlpDeep);
svc.api({ input: input(), output: new NumpyNdarray(), name: 'mlp_deep_one' }, mlpDeep);
svc.api({ input: input(ONNX_WIDTH), output: new NumpyNdarray(), name: 'onnx_mlp', ...batching }, onnx);
svc.api({ input: input(ONNX_WIDTH), output: new NumpyNdarray(), name: 'onnx_mlp_one' }, onnx);
svc.api({ input: new Text(), output: new JSONDescriptor() }, function costs() {
  const learnt = (api: string) => handle.app.runtime.batcher(api)!.cost.estimate(MAX_BATCH);
  return {
    dense: { ...measured.dense, learntFullBatch: learnt('dense') },
    mlp: { ...measured.mlp, learntFullBatch: learnt('mlp') },
    mlp_deep: { ...measured.mlp_deep, learntFullBatch: learnt('mlp_deep') },
    onnx_mlp: { ...measured.onnx_mlp, learntFullBatch: learnt('onnx_mlp') },
  };
});
const handle = await serve(svc, { port: 0, logger: false, maxConcurrency: 100_000, handleSignals: true });
process.stdout.write(`${handle.url}\n`);
