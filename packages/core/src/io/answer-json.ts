import { ndarrayToJson } from '../ndarray/json.js';
import type { NDArray } from '../ndarray/ndarray.js';
import { TaskPool } from '../threads/task-pool.js';

/**
 * Arrays of at least this many values are written as JSON in a worker thread: about 5 ms of writing on the
 * event loop here; a 4 M-value answer held `/livez` for seconds.
 */
export const OFF_LOOP_ANSWER_VALUES = 1 << 16;

let pool: TaskPool | undefined;

function answerThreads(): TaskPool {
  const ext = import.meta.url.endsWith('.ts') ? '.ts' : '.js';
  pool ??= new TaskPool({
    name: 'Answer encoding',
    module: new URL(`./answer-thread${ext}`, import.meta.url),
    // An answer is bounded (`maxAnswerElements`); this caps what one encoding may hold beyond it.
    resourceLimits: { maxOldGenerationSizeMb: 1024 },
  });
  return pool;
}

/**
 * `arr` as compact JSON (`ndarrayToJson`): small arrays on the calling thread, large numeric ones in a worker
 * thread, so that one large answer does not hold every other request. Bound the answer first
 * (`checkAnswerSize`).
 */
export async function answerJson(arr: NDArray): Promise<string | Uint8Array> {
  if (arr.size < OFF_LOOP_ANSWER_VALUES || !ArrayBuffer.isView(arr.data)) return ndarrayToJson(arr);
  // A copy of just this array's values (a batch member is a view over the whole batch), moved to the thread.
  const data = (arr.data as Float32Array).slice();
  return answerThreads().run<Uint8Array>('ndarrayJson', [data, [...arr.shape], arr.dtype], [data.buffer]);
}
