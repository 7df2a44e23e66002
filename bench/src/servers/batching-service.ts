/**
 * Child process: a dense 256×256 float32 layer (y = x·W) on TensorFlow.js's WebAssembly backend, served twice:
 * `/dense` batchable (max_batch_size 32, max_latency_ms 100) and `/dense_one` not. Like any model runtime, a
 * call has a fixed cost (tensor set-up, kernel dispatch, reading W) that a batch of rows shares.
 * Prints its URL on the first stdout line.
 */
import * as tf from '@tensorflow/tfjs';
import '@tensorflow/tfjs-backend-wasm';
import { NDArray, NumpyNdarray, Service, serve, Text } from '@tiffin/core';

export const WIDTH = 256;
export const MAX_BATCH = 32;
export const MAX_LATENCY_MS = 100;

await tf.setBackend('wasm');
await tf.ready();
const W = tf.tidy(() => tf.randomUniform([WIDTH, WIDTH], -1, 1, 'float32', 7));

async function dense(x: NDArray): Promise<NDArray> {
  const rows = x.shape[0]!;
  const y = tf.tidy(() => tf.matMul(tf.tensor2d(x.data as Float32Array, [rows, WIDTH], 'float32'), W));
  const data = (await y.data()) as Float32Array;
  y.dispose();
  return new NDArray(data, [rows, WIDTH], 'float32');
}

const input = () => new NumpyNdarray({ dtype: 'float32', shape: [-1, WIDTH], enforce_shape: true });
const svc = new Service('bench_dense');
svc.api(
  {
    input: input(),
    output: new NumpyNdarray(),
    batchable: true,
    max_batch_size: MAX_BATCH,
    max_latency_ms: MAX_LATENCY_MS,
  },
  dense,
);
svc.api({ input: input(), output: new NumpyNdarray(), name: 'dense_one' }, dense);
// The learnt cost of a full batch, in ms (the bench's p99 bound is max_latency_ms plus this).
svc.api({ input: new Text(), output: new Text() }, function batch_cost() {
  return String(handle.app.runtime.batcher('dense')!.cost.estimate(MAX_BATCH));
});
const handle = await serve(svc, { port: 0, logger: false, maxConcurrency: 100_000, handleSignals: true });
process.stdout.write(`${handle.url}\n`);
