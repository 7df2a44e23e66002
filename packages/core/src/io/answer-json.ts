import { ndarrayToJson } from '../ndarray/json.js';
import type { NDArray } from '../ndarray/ndarray.js';
import { jsonThreads, ownValues } from './json-threads.js';

/**
 * Arrays of at least this many values are written as JSON in a worker thread: about 5 ms of writing on the
 * event loop here; a 4 M-value answer held `/livez` for seconds.
 */
export const OFF_LOOP_ANSWER_VALUES = 1 << 16;

/**
 * `arr` as compact JSON (`ndarrayToJson`): small arrays on the calling thread, large numeric ones in a worker
 * thread, so that one large answer does not hold every other request. Bound the answer first
 * (`checkAnswerSize`).
 */
export async function answerJson(arr: NDArray): Promise<string | Uint8Array> {
  if (arr.size < OFF_LOOP_ANSWER_VALUES || !ArrayBuffer.isView(arr.data)) return ndarrayToJson(arr);
  const data = ownValues(arr.data);
  return jsonThreads().run<Uint8Array>(
    'ndarrayJson',
    [data, [...arr.shape], arr.dtype],
    [data.buffer as ArrayBuffer],
  );
}
