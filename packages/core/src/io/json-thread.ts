import type { DType } from '../ndarray/dtype.js';
import { ndarrayToJson } from '../ndarray/json.js';
import { NDArray } from '../ndarray/ndarray.js';
import type { NamedTensors } from '../signature/named-tensors.js';
import type { TensorSpec } from '../signature/signature.js';
import { serveTasksInThread, Transferring } from '../threads/task-thread.js';
import { parseInferRequest } from '../wire/v2/infer-request.js';
import { NumpyNdarray } from './descriptors/numpy-ndarray.js';
import { Tensors } from './descriptors/tensors.js';
import type { MovedArray } from './json-threads.js';

function moved(arrays: NDArray[]): ArrayBuffer[] {
  // Once each: arrays of binary tensor data are views over one body.
  const buffers = new Set(
    arrays.flatMap((a) => (ArrayBuffer.isView(a.data) ? [a.data.buffer as ArrayBuffer] : [])),
  );
  return [...buffers];
}

const plain = (a: NDArray): MovedArray => ({ data: a.data, shape: [...a.shape], dtype: a.dtype });
const asBuffer = (body: Uint8Array) => Buffer.from(body.buffer, body.byteOffset, body.byteLength);

/**
 * The thread side of `jsonThreads()`: large JSON bodies read into arrays (by the descriptors' own readers) and
 * large arrays written as JSON, off the event loop; arrays and bytes are moved back, not copied.
 */
serveTasksInThread({
  ndarrayFromJson(body: Uint8Array, dtype: DType | null, maxDepth: number) {
    const array = new NumpyNdarray({ dtype }).parseBody(asBuffer(body), maxDepth);
    return new Transferring(plain(array), moved([array]));
  },
  tensorsFromJson(body: Uint8Array, model: string, tensors: TensorSpec[], maxDepth: number) {
    const arrays: NamedTensors = new Tensors({ model, tensors }).parseBody(asBuffer(body), maxDepth);
    const out: Record<string, MovedArray> = {};
    for (const [name, a] of Object.entries(arrays)) out[name] = plain(a);
    return new Transferring(out, moved(Object.values(arrays)));
  },
  inferRequestFromJson(body: Uint8Array, headerLength: string | undefined, maxDepth: number) {
    const request = parseInferRequest(asBuffer(body), headerLength, maxDepth);
    const inputs = request.inputs.map((t) => ({ name: t.name, array: plain(t.array) }));
    return new Transferring({ ...request, inputs }, moved(request.inputs.map((t) => t.array)));
  },
  ndarrayJson(data: NDArray['data'], shape: number[], dtype: DType) {
    const bytes = Buffer.from(ndarrayToJson(new NDArray(data as never, shape, dtype as never)), 'utf8');
    // A Buffer may sit in a shared pool slab; a copy of its own can be moved.
    const own =
      bytes.byteOffset === 0 && bytes.buffer.byteLength === bytes.byteLength ? bytes : Uint8Array.from(bytes);
    return new Transferring(own, [own.buffer as ArrayBuffer]);
  },
});
