import { writeJson } from '../encoding/json-write.js';
import { BadInput } from '../errors/index.js';
import type { NDArray } from '../ndarray/ndarray.js';
import { HEADER_LENGTH, type InferRequest } from '../wire/v2/infer-request.js';
import { type Parameters, tensorBytes, tensorHeaderJson, tensorJson } from '../wire/v2/tensor.js';

/** The header naming the JSON part's length, for the HTTP route (which reads the request with `io/`). */
export { HEADER_LENGTH };

/** An output tensor to send, with the parameters its request named. */
export interface SelectedOutput {
  name: string;
  array: NDArray;
  parameters: Parameters;
}

/**
 * The outputs a request asked for, in its order (all, in the model's order, when it named none); an
 * unknown name is the client's mistake (400). Shared by the HTTP and the gRPC form.
 */
export function selectOutputs(
  model: string,
  request: InferRequest,
  outputs: ReadonlyArray<{ name: string; array: NDArray }>,
): SelectedOutput[] {
  const byName = new Map(outputs.map((o) => [o.name, o.array]));
  const wanted = request.outputs ?? outputs.map((o) => ({ name: o.name, parameters: {} as Parameters }));
  return wanted.map(({ name, parameters }) => {
    const array = byName.get(name);
    if (!array) {
      throw new BadInput(
        `Model '${model}' has no output '${name}' (outputs: ${[...byName.keys()].join(', ')})`,
      );
    }
    return { name, array, parameters };
  });
}

/** A response body and the headers that describe it. */
export interface InferResponseBody {
  body: Buffer;
  headers: Array<[string, string]>;
}

/**
 * Build `$inference_response`: the requested outputs (all when none were named; an unknown name is a 400),
 * each as JSON `data` or, when `binary_data` (per output) or `binary_data_output` (per request) asks, as
 * bytes after the JSON with `binary_data_size`.
 */
export function writeInferResponse(
  model: string,
  request: InferRequest,
  outputs: ReadonlyArray<{ name: string; array: NDArray }>,
): InferResponseBody {
  const binaryDefault = request.parameters.binary_data_output === true;
  const chunks: Uint8Array[] = [];
  const described = selectOutputs(model, request, outputs).map(({ name, array, parameters }) => {
    const binary = typeof parameters.binary_data === 'boolean' ? parameters.binary_data : binaryDefault;
    if (!binary) return tensorJson(name, array);
    const bytes = tensorBytes(array);
    chunks.push(bytes);
    return { ...tensorHeaderJson(name, array), parameters: { binary_data_size: bytes.byteLength } };
  });
  const response: Record<string, unknown> = { model_name: model, outputs: described };
  if (request.id !== undefined) response.id = request.id;
  const json = Buffer.from(writeJson(response), 'utf8');
  if (chunks.length === 0) return { body: json, headers: [['content-type', 'application/json']] };
  return {
    body: Buffer.concat([json, ...chunks]),
    headers: [
      ['content-type', 'application/octet-stream'],
      [HEADER_LENGTH, String(json.length)],
    ],
  };
}
