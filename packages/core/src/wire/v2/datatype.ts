import { BadInput } from '../../errors/index.js';
import type { DType } from '../../ndarray/dtype.js';

/** Tensor element types of the Open Inference Protocol. */
export type Datatype =
  | 'BOOL'
  | 'UINT8'
  | 'UINT16'
  | 'UINT32'
  | 'UINT64'
  | 'INT8'
  | 'INT16'
  | 'INT32'
  | 'INT64'
  | 'FP16'
  | 'FP32'
  | 'FP64'
  | 'BYTES';

const TO_DTYPE: Record<Datatype, DType> = {
  BOOL: 'bool',
  UINT8: 'uint8',
  UINT16: 'uint16',
  UINT32: 'uint32',
  UINT64: 'uint64',
  INT8: 'int8',
  INT16: 'int16',
  INT32: 'int32',
  INT64: 'int64',
  FP16: 'float16',
  FP32: 'float32',
  FP64: 'float64',
  BYTES: 'str',
};

const FROM_DTYPE = new Map<DType, Datatype>(
  Object.entries(TO_DTYPE).map(([datatype, dtype]) => [dtype, datatype as Datatype]),
);

/** Bytes per element in the binary form (BYTES elements are length-prefixed instead). */
export const ELEMENT_SIZE: Record<Exclude<Datatype, 'BYTES'>, number> = {
  BOOL: 1,
  UINT8: 1,
  INT8: 1,
  UINT16: 2,
  INT16: 2,
  FP16: 2,
  UINT32: 4,
  INT32: 4,
  FP32: 4,
  UINT64: 8,
  INT64: 8,
  FP64: 8,
};

export function isDatatype(value: unknown): value is Datatype {
  return typeof value === 'string' && value in TO_DTYPE;
}

/** The NDArray dtype of a protocol datatype; an unknown name is the client's mistake (400). */
export function dtypeOf(datatype: unknown, tensor: string): DType {
  if (!isDatatype(datatype)) {
    throw new BadInput(`Tensor '${tensor}': unsupported datatype ${JSON.stringify(datatype)}`);
  }
  return TO_DTYPE[datatype];
}

/** The protocol datatype of an NDArray dtype (`object` arrays travel as BYTES of their JSON). */
export function datatypeOf(dtype: DType): Datatype {
  return FROM_DTYPE.get(dtype) ?? 'BYTES';
}
