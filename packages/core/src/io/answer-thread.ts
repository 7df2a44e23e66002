import type { DType } from '../ndarray/dtype.js';
import { ndarrayToJson } from '../ndarray/json.js';
import { NDArray } from '../ndarray/ndarray.js';
import { serveTasksInThread, Transferring } from '../threads/task-thread.js';

/** The thread side of `answerJson`: an array's JSON text, written off the event loop and moved back as bytes. */
serveTasksInThread({
  ndarrayJson(data: NDArray['data'], shape: number[], dtype: DType) {
    const bytes = Buffer.from(ndarrayToJson(new NDArray(data as never, shape, dtype as never)), 'utf8');
    // A Buffer may sit in a shared pool slab; a copy of its own can be moved.
    const own =
      bytes.byteOffset === 0 && bytes.buffer.byteLength === bytes.byteLength ? bytes : Uint8Array.from(bytes);
    return new Transferring(own, [own.buffer as ArrayBuffer]);
  },
});
