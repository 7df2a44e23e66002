import { parseJsonBytes } from '../encoding/json-parse.js';
import { writeJson } from '../encoding/json-write.js';
import { BadInput } from '../errors/index.js';
import type { NDArray } from '../ndarray/ndarray.js';
import {
  type Parameters,
  readTensorHeader,
  type Tensor,
  tensorBytes,
  tensorFromBinary,
  tensorFromJson,
  tensorHeaderJson,
  tensorJson,
} from '../wire/v2/tensor.js';

/** The header of the binary tensor data extension: length of the JSON part of the body. */
export const HEADER_LENGTH = 'inference-header-content-length';

/** An inference request (`$inference_request`), its tensors decoded. */
export interface InferRequest {
  id: string | undefined;
  parameters: Parameters;
  inputs: Tensor[];
  /** Requested outputs (`$request_output`), or null for all. */
  outputs: Array<{ name: string; parameters: Parameters }> | null;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function binarySize(parameters: Parameters, name: string): number | null {
  const size = parameters.binary_data_size;
  if (size === undefined) return null;
  if (!Number.isSafeInteger(size) || (size as number) < 0) {
    throw new BadInput(`Tensor '${name}': binary_data_size must be a non-negative integer`);
  }
  return size as number;
}

/**
 * Read a request body: JSON alone, or (with `Inference-Header-Content-Length`) a JSON header followed by
 * the binary data of the inputs that declare `binary_data_size`, in input order. Malformed → 400.
 */
export function parseInferRequest(
  body: Buffer,
  headerLength: string | undefined,
  maxDepth: number,
): InferRequest {
  let jsonPart = body;
  let binary: Buffer | null = null;
  if (headerLength !== undefined && headerLength !== '') {
    const n = Number(headerLength);
    if (!Number.isSafeInteger(n) || n < 0 || n > body.length) {
      throw new BadInput(
        `${HEADER_LENGTH} must be an integer between 0 and the body length (${body.length})`,
      );
    }
    jsonPart = body.subarray(0, n);
    binary = body.subarray(n);
  }
  let parsed: unknown;
  try {
    parsed = parseJsonBytes(jsonPart, { maxDepth });
  } catch (err) {
    throw new BadInput(`Inference request is not valid JSON: ${(err as Error).message}`);
  }
  if (!isObject(parsed)) throw new BadInput('Inference request must be a JSON object');
  const { id, parameters, inputs, outputs } = parsed;
  if (id !== undefined && typeof id !== 'string') throw new BadInput('id must be a string');
  if (parameters !== undefined && !isObject(parameters)) throw new BadInput('parameters must be an object');
  if (!Array.isArray(inputs) || inputs.length === 0) throw new BadInput('inputs must be a non-empty list');
  let offset = 0;
  const tensors = inputs.map((raw, i) => {
    const header = readTensorHeader(raw, i);
    const size = binarySize(header.parameters, header.name);
    if (size === null) return tensorFromJson(header);
    if (!binary) throw new BadInput(`Tensor '${header.name}': binary_data_size without ${HEADER_LENGTH}`);
    if (header.data !== undefined)
      throw new BadInput(`Tensor '${header.name}': both data and binary_data_size`);
    if (offset + size > binary.length) {
      throw new BadInput(`Tensor '${header.name}': binary_data_size overruns the body`);
    }
    const tensor = tensorFromBinary(header, binary.subarray(offset, offset + size));
    offset += size;
    return tensor;
  });
  if (binary && offset !== binary.length) {
    throw new BadInput(`The body has ${binary.length - offset} bytes after the binary tensor data`);
  }
  checkUniqueNames(tensors);
  let requested: InferRequest['outputs'] = null;
  if (outputs !== undefined) {
    if (!Array.isArray(outputs)) throw new BadInput('outputs must be a list');
    requested = outputs.map((o, i) => {
      if (!isObject(o) || typeof o.name !== 'string')
        throw new BadInput(`outputs[${i}].name must be a string`);
      if (o.parameters !== undefined && !isObject(o.parameters)) {
        throw new BadInput(`outputs[${i}].parameters must be an object`);
      }
      return { name: o.name, parameters: (o.parameters as Parameters | undefined) ?? {} };
    });
  }
  return { id, parameters: parameters ?? {}, inputs: tensors, outputs: requested };
}

/** Two inputs of one name are the client's mistake (400), whatever the transport. */
export function checkUniqueNames(tensors: readonly Tensor[]): void {
  const names = new Set<string>();
  for (const t of tensors) {
    if (names.has(t.name)) throw new BadInput(`Input '${t.name}' is given twice`);
    names.add(t.name);
  }
}

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
