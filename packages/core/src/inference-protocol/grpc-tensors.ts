import { plainArray } from '../encoding/plain-array.js';
import { BadInput } from '../errors/index.js';
import { allocate } from '../ndarray/dtype.js';
import { NDArray } from '../ndarray/ndarray.js';
import { type Datatype, datatypeOf, dtypeOf } from '../wire/v2/datatype.js';
import { checkUniqueNames, type InferRequest } from '../wire/v2/infer-request.js';
import {
  elementCount,
  type Parameters,
  readTensorHeader,
  type Tensor,
  type TensorHeader,
  tensorBytes,
  tensorFromBinary,
} from '../wire/v2/tensor.js';
import type {
  InferOutputTensorMessage,
  ModelInferRequestMessage,
  ModelInferResponseMessage,
  ParameterMapMessage,
  TensorContentsMessage,
} from './grpc-messages.js';
import { selectOutputs } from './infer-body.js';

/** The gRPC form of an inference request: the shared `InferRequest`, and whether its inputs came raw. */
export interface GrpcInferRequest {
  request: InferRequest;
  /** Inputs in `raw_input_contents`: the answer uses `raw_output_contents` too. */
  raw: boolean;
}

type ContentsField = keyof TensorContentsMessage;

/** The `InferTensorContents` field of each datatype; FP16 has none (raw contents only). */
const CONTENTS_FIELD: Record<Exclude<Datatype, 'FP16'>, ContentsField> = {
  BOOL: 'bool_contents',
  INT8: 'int_contents',
  INT16: 'int_contents',
  INT32: 'int_contents',
  INT64: 'int64_contents',
  UINT8: 'uint_contents',
  UINT16: 'uint_contents',
  UINT32: 'uint_contents',
  UINT64: 'uint64_contents',
  FP32: 'fp32_contents',
  FP64: 'fp64_contents',
  BYTES: 'bytes_contents',
};

/** Value ranges of the datatypes narrower than their wire field (int32 / uint32). */
const RANGE: Partial<Record<Datatype, [number, number]>> = {
  INT8: [-128, 127],
  INT16: [-32768, 32767],
  UINT8: [0, 255],
  UINT16: [0, 65535],
};

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** An `InferParameter` map as plain values (int64 as a number); a parameter without a value is a 400. */
function parametersOf(map: ParameterMapMessage | undefined, where: string): Parameters {
  // No prototype: a parameter named `__proto__` stays a plain key.
  const out: Parameters = Object.create(null);
  for (const [key, p] of Object.entries(map ?? {})) {
    const choice = p?.parameter_choice;
    if (choice === 'bool_param') out[key] = p.bool_param ?? false;
    else if (choice === 'int64_param') out[key] = Number(p.int64_param ?? 0);
    else if (choice === 'string_param') out[key] = p.string_param ?? '';
    else throw new BadInput(`${where}: parameter '${key}' has no value`);
  }
  return out;
}

function filledFields(contents: TensorContentsMessage | undefined): ContentsField[] {
  if (!contents) return [];
  return (Object.keys(contents) as ContentsField[]).filter((k) => (contents[k]?.length ?? 0) > 0);
}

/** A tensor from its typed `contents`: only its datatype's field, exactly as many elements as the shape. */
function tensorFromContents(header: TensorHeader, contents: TensorContentsMessage | undefined): Tensor {
  const { name, shape, datatype } = header;
  if (datatype === 'FP16') {
    throw new BadInput(`Tensor '${name}': FP16 elements travel in raw_input_contents only`);
  }
  const field = CONTENTS_FIELD[datatype];
  const stray = filledFields(contents).find((f) => f !== field);
  if (stray) throw new BadInput(`Tensor '${name}': ${datatype} elements go in ${field}, got ${stray}`);
  const values = contents?.[field] ?? [];
  const count = elementCount(shape);
  if (values.length !== count) {
    throw new BadInput(
      `Tensor '${name}': shape [${shape.join(', ')}] needs ${count} elements, ${field} has ${values.length}`,
    );
  }
  if (datatype === 'BYTES') {
    const items = (values as Uint8Array[]).map((bytes, i) => {
      try {
        return utf8.decode(bytes);
      } catch {
        throw new BadInput(`Tensor '${name}': BYTES element ${i} is not valid UTF-8`);
      }
    });
    return { name, array: new NDArray(items, shape, 'str') };
  }
  const range = RANGE[datatype];
  if (range && !(values as number[]).every((v) => v >= range[0] && v <= range[1])) {
    throw new BadInput(`Tensor '${name}': a value is outside the range of ${datatype}`);
  }
  const dtype = dtypeOf(datatype, name);
  const storage = allocate(dtype, count);
  if (datatype === 'INT64' || datatype === 'UINT64') {
    const big = storage as BigInt64Array | BigUint64Array;
    for (let i = 0; i < count; i++) big[i] = BigInt(String(values[i]));
  } else if (datatype === 'BOOL') {
    const flags = storage as Uint8Array;
    for (let i = 0; i < count; i++) flags[i] = values[i] ? 1 : 0;
  } else {
    (storage as Float64Array).set(values as number[]);
  }
  return { name, array: new NDArray(storage as never, shape, dtype) };
}

/**
 * A `ModelInferRequest` as the shared `InferRequest`: each input from its typed `contents` or, when
 * `raw_input_contents` is given, from its raw bytes (one entry per input, none with `contents`). Anything
 * malformed is a 400 (INVALID_ARGUMENT), checked before any storage the shape asks for is allocated.
 */
export function inferRequestFromProto(message: ModelInferRequestMessage): GrpcInferRequest {
  const inputs = message.inputs ?? [];
  if (inputs.length === 0) throw new BadInput('inputs must be a non-empty list');
  const raw = message.raw_input_contents ?? [];
  if (raw.length > 0 && raw.length !== inputs.length) {
    throw new BadInput(`raw_input_contents has ${raw.length} entries for ${inputs.length} inputs`);
  }
  const tensors = inputs.map((input, i) => {
    const header = readTensorHeader(
      {
        name: input.name,
        shape: (input.shape ?? []).map(Number),
        datatype: input.datatype,
        parameters: parametersOf(input.parameters, `inputs[${i}]`),
      },
      i,
    );
    if (raw.length === 0) return tensorFromContents(header, input.contents);
    if (filledFields(input.contents).length > 0) {
      throw new BadInput(`Tensor '${header.name}': contents given with raw_input_contents`);
    }
    return tensorFromBinary(header, raw[i]!);
  });
  checkUniqueNames(tensors);
  const outputs =
    message.outputs && message.outputs.length > 0
      ? message.outputs.map((o, i) => {
          if (!o.name) throw new BadInput(`outputs[${i}].name must be a non-empty string`);
          return { name: o.name, parameters: parametersOf(o.parameters, `outputs[${i}]`) };
        })
      : null;
  return {
    request: {
      id: message.id || undefined,
      parameters: parametersOf(message.parameters, 'request'),
      inputs: tensors,
      outputs,
    },
    raw: raw.length > 0,
  };
}

/** An output's typed `contents` (int64/uint64 as decimal strings, BYTES as UTF-8; `object` as JSON). */
function contentsOf(array: NDArray, datatype: Exclude<Datatype, 'FP16'>): TensorContentsMessage {
  const field = CONTENTS_FIELD[datatype];
  const data = array.data;
  if (datatype === 'BYTES') {
    const items = (data as unknown[]).map((v) =>
      Buffer.from(typeof v === 'string' ? v : (JSON.stringify(v) ?? 'null'), 'utf8'),
    );
    return { bytes_contents: items };
  }
  if (datatype === 'BOOL') return { bool_contents: plainArray(data as Uint8Array, (v) => v !== 0) };
  if (datatype === 'INT64' || datatype === 'UINT64') {
    return { [field]: plainArray(data as BigInt64Array | BigUint64Array, String) };
  }
  return { [field]: plainArray(data as ArrayLike<number>) };
}

/**
 * The `ModelInferResponse` for a request: the outputs it asked for, typed in `contents`, or all in
 * `raw_output_contents` when the inputs came raw, the request set `binary_data_output`, or an output is FP16
 * (which has no typed field).
 */
export function inferResponseToProto(
  model: string,
  infer: GrpcInferRequest,
  outputs: ReadonlyArray<{ name: string; array: NDArray }>,
): ModelInferResponseMessage {
  const selected = selectOutputs(model, infer.request, outputs);
  const described = selected.map(({ name, array }) => ({
    name,
    datatype: datatypeOf(array.dtype),
    shape: [...array.shape],
    array,
  }));
  const raw =
    infer.raw ||
    infer.request.parameters.binary_data_output === true ||
    described.some((o) => o.datatype === 'FP16');
  const response: ModelInferResponseMessage = {
    model_name: model,
    model_version: '',
    id: infer.request.id ?? '',
    outputs: described.map(({ name, datatype, shape, array }): InferOutputTensorMessage => {
      const tensor: InferOutputTensorMessage = { name, datatype, shape };
      if (!raw) tensor.contents = contentsOf(array, datatype as Exclude<Datatype, 'FP16'>);
      return tensor;
    }),
  };
  if (raw) response.raw_output_contents = described.map(({ array }) => tensorBytes(array));
  return response;
}
