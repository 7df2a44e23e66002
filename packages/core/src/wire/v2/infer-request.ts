import { parseJsonBytes } from '../../encoding/json-parse.js';
import { BadInput } from '../../errors/index.js';
import {
  type Parameters,
  readTensorHeader,
  type Tensor,
  tensorFromBinary,
  tensorFromJson,
} from './tensor.js';

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
