import { NDArray } from '../ndarray/ndarray.js';
import { type InferRequest, parseInferRequest } from '../wire/v2/infer-request.js';
import type { Tensor } from '../wire/v2/tensor.js';
import { jsonThreads, type MovedArray, OFF_LOOP_BODY_BYTES } from './json-threads.js';

/**
 * An Open Inference Protocol request body read into its tensors: a JSON part from `OFF_LOOP_BODY_BYTES` is
 * parsed in a JSON thread (as NumpyNdarray and Tensors bodies are), its arrays moved back, so a large body does
 * not hold `/livez` and every other request; smaller ones are parsed here. The JSON part is the whole body, or
 * its first `headerLength` bytes with the binary data extension (binary data alone costs no parsing).
 */
export async function readInferRequest(
  body: Buffer,
  headerLength: string | undefined,
  maxDepth: number,
  /** The caller's: a body still waiting for a JSON thread when it aborts is dropped (`TaskPool.run`). */
  signal?: AbortSignal,
): Promise<InferRequest> {
  const jsonBytes = headerLength ? Number(headerLength) : body.byteLength;
  // A header that is not a length is refused by the parser, at once.
  if (!(jsonBytes >= OFF_LOOP_BODY_BYTES)) return parseInferRequest(body, headerLength, maxDepth);
  const copy = Uint8Array.from(body);
  const got = await jsonThreads().run<
    Omit<InferRequest, 'inputs'> & { inputs: Array<{ name: string; array: MovedArray }> }
  >('inferRequestFromJson', [copy, headerLength, maxDepth], [copy.buffer], signal);
  const inputs: Tensor[] = got.inputs.map(({ name, array }) => ({
    name,
    array: new NDArray(array.data as never, array.shape, array.dtype as never),
  }));
  return { ...got, inputs };
}
