import type { DType } from '../ndarray/dtype.js';
import type { NDArray } from '../ndarray/ndarray.js';
import { TaskPool } from '../threads/task-pool.js';

/**
 * Request bodies from this size are decoded as JSON in a worker thread, not on the event loop: a 32 MiB
 * NumpyNdarray body held `/livez` for seconds.
 */
export const OFF_LOOP_BODY_BYTES = 1 << 20;

let pool: TaskPool | undefined;

/**
 * The threads that read large JSON bodies and write large JSON answers of arrays (`json-thread.ts`), so that
 * one large request or answer does not hold every other request. Started on first use, and by `prepare`.
 */
export function jsonThreads(): TaskPool {
  const ext = import.meta.url.endsWith('.ts') ? '.ts' : '.js';
  pool ??= new TaskPool({
    name: 'JSON decoding',
    module: new URL(`./json-thread${ext}`, import.meta.url),
    // Bodies and answers are bounded (`maxBodySize`, `maxAnswerElements`); this caps what one may hold beyond.
    resourceLimits: { maxOldGenerationSizeMb: 1024 },
  });
  return pool;
}

/** A numeric array's values as a buffer of their own (a batch member is a view over the whole batch), to move. */
export function ownValues<T extends ArrayBufferView>(values: T): T {
  return (values as unknown as Float32Array).slice() as unknown as T;
}

/** An array as it crosses back from a JSON thread: its values moved when they are numbers. */
export interface MovedArray {
  data: NDArray['data'];
  shape: number[];
  dtype: DType;
}
