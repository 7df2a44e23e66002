import { plainArray } from '../../encoding/plain-array.js';
import { BadInput, isTiffinError, truncateForMessage } from '../../errors/index.js';
import { type DType, formatShape, itemSize, roundToFloat16 } from '../../ndarray/dtype.js';
import { NDArray } from '../../ndarray/ndarray.js';
import {
  type NDArrayDType,
  type NDArrayMessage,
  VALUE_FIELDS,
  type NDArrayValueField as ValueField,
} from '../../wire/proto/messages.js';

/**
 * The NumpyNdarray's gRPC wire form (docs/spec/io-descriptors.md §11.3): the `NDArray` message's dtype enum and
 * value fields, and `serialized_bytes` in a declared fixed-size dtype. The descriptor validates what these build.
 */

const DTYPE_TO_PROTO: Partial<Record<DType, { enum: NDArrayDType; field: keyof NDArrayMessage }>> = {
  float32: { enum: 'DTYPE_FLOAT', field: 'float_values' },
  float64: { enum: 'DTYPE_DOUBLE', field: 'double_values' },
  bool: { enum: 'DTYPE_BOOL', field: 'bool_values' },
  int32: { enum: 'DTYPE_INT32', field: 'int32_values' },
  int64: { enum: 'DTYPE_INT64', field: 'int64_values' },
  uint32: { enum: 'DTYPE_UINT32', field: 'uint32_values' },
  uint64: { enum: 'DTYPE_UINT64', field: 'uint64_values' },
  str: { enum: 'DTYPE_STRING', field: 'string_values' },
};

const PROTO_ENUM: readonly NDArrayDType[] = [
  'DTYPE_UNSPECIFIED',
  'DTYPE_FLOAT',
  'DTYPE_DOUBLE',
  'DTYPE_BOOL',
  'DTYPE_INT32',
  'DTYPE_INT64',
  'DTYPE_UINT32',
  'DTYPE_UINT64',
  'DTYPE_STRING',
];

const FIELD_DTYPE: Record<ValueField, DType> = {
  float_values: 'float32',
  double_values: 'float64',
  bool_values: 'bool',
  int32_values: 'int32',
  int64_values: 'int64',
  uint32_values: 'uint32',
  uint64_values: 'uint64',
  string_values: 'str',
};

/** The array an `NDArray` message carries: its dtype from the enum, else from the one value field present. */
export function arrayFromMessage(msg: NDArrayMessage): NDArray {
  const shape = msg.shape ?? [];
  let dtype: DType;
  let field: ValueField;
  const dtypeEnum = protoEnumName(msg.dtype);
  if (dtypeEnum !== 'DTYPE_UNSPECIFIED') {
    const entry = Object.entries(DTYPE_TO_PROTO).find(([, v]) => v.enum === dtypeEnum);
    dtype = entry![0] as DType;
    field = entry![1].field as ValueField;
  } else {
    const present = VALUE_FIELDS.filter((f) => (msg[f]?.length ?? 0) > 0);
    // A shape alone declares elements the message does not carry: only an empty shape is taken, never
    // allocated from the declaration (the reference's np.empty(shape) would be a few bytes asking for GiBs).
    if (present.length === 0) return emptyArrayOfShape(shape);
    if (present.length > 1) {
      throw new BadInput(
        `Array contents can only be one of given values key. Use one of '${VALUE_FIELDS.join(', ')}' instead.`,
      );
    }
    field = present[0]!;
    dtype = FIELD_DTYPE[field];
  }
  let arr = arrayFromValues(dtype, msg[field] ?? []);
  if (shape.length > 0) arr = arr.reshape(shape);
  return arr;
}

/** The array `serialized_bytes` carry in `dtype` (little-endian items, any byte offset). */
export function arrayFromRawBytes(bytes: Uint8Array, dtype: DType): NDArray {
  const size = itemSize(dtype);
  if (size === null) {
    throw new BadInput(`'serialized_bytes' cannot carry dtype '${dtype}' (fixed-size dtypes only)`);
  }
  if (bytes.byteLength % size !== 0) {
    throw new BadInput(
      `'serialized_bytes' length ${bytes.byteLength} is not a multiple of the ${dtype} item size ${size}`,
    );
  }
  // Copy into a fresh, aligned buffer (the message's bytes may sit at any offset).
  const copy = new Uint8Array(bytes);
  const n = bytes.byteLength / size;
  const view = new DataView(copy.buffer);
  switch (dtype) {
    case 'bool':
      return new NDArray(
        copy.map((b) => (b ? 1 : 0)),
        [n],
        'bool',
      );
    case 'float16': {
      const out = new Float32Array(n);
      for (let i = 0; i < n; i++) out[i] = halfBitsToNumber(view.getUint16(i * 2, true));
      return new NDArray(out, [n], 'float16');
    }
    default:
      return NDArray.from(rawView(dtype, copy.buffer)).astype(dtype);
  }
}

/** The `NDArray` message of an array; int64/uint64 values as decimal strings, exact. */
export function arrayToMessage(arr: NDArray): NDArrayMessage {
  const mapping = DTYPE_TO_PROTO[arr.dtype];
  if (!mapping) throw new BadInput(`Unsupported dtype '${arr.dtype}' for response message.`);
  const data = arr.data as ArrayLike<unknown>;
  let values: unknown[];
  if (arr.dtype === 'bool') values = plainArray(data, (v) => v === 1);
  else if (arr.dtype === 'int64' || arr.dtype === 'uint64') values = plainArray(data, String);
  else values = plainArray(data);
  return { dtype: mapping.enum, shape: [...arr.shape], [mapping.field]: values } as NDArrayMessage;
}

function protoEnumName(value: NDArrayDType | number | undefined): NDArrayDType {
  if (value === undefined || value === null) return 'DTYPE_UNSPECIFIED';
  if (typeof value === 'number') {
    const name = PROTO_ENUM[value];
    if (!name) throw new BadInput(`${truncateForMessage(String(value))} is invalid.`);
    return name;
  }
  if (!PROTO_ENUM.includes(value)) throw new BadInput(`${truncateForMessage(String(value))} is invalid.`);
  return value;
}

/** Build an array from a proto value field; int64/uint64 arrive as decimal strings and stay exact. */
function arrayFromValues(dtype: DType, values: readonly unknown[]): NDArray {
  try {
    switch (dtype) {
      case 'int64':
        return new NDArray(
          BigInt64Array.from(values, (v) => BigInt(v as string)),
          [values.length],
          'int64',
        );
      case 'uint64':
        return new NDArray(
          BigUint64Array.from(values, (v) => BigInt(v as string)),
          [values.length],
          'uint64',
        );
      case 'str':
        return new NDArray(values.map(String), [values.length], 'str');
      default:
        return NDArray.from(values as unknown[], dtype);
    }
  } catch (err) {
    if (isTiffinError(err)) throw err;
    throw new BadInput(`Invalid ${dtype} values in the NDArray message: ${(err as Error).message}`);
  }
}

function rawView(dtype: DType, buffer: ArrayBufferLike): ArrayBufferView {
  switch (dtype) {
    case 'int8':
      return new Int8Array(buffer);
    case 'uint8':
      return new Uint8Array(buffer);
    case 'int16':
      return new Int16Array(buffer);
    case 'uint16':
      return new Uint16Array(buffer);
    case 'int32':
      return new Int32Array(buffer);
    case 'uint32':
      return new Uint32Array(buffer);
    case 'int64':
      return new BigInt64Array(buffer);
    case 'uint64':
      return new BigUint64Array(buffer);
    case 'float32':
      return new Float32Array(buffer);
    default:
      return new Float64Array(buffer);
  }
}

/** IEEE 754 half-precision bits → number. */
function halfBitsToNumber(bits: number): number {
  const sign = bits & 0x8000 ? -1 : 1;
  const exp = (bits >> 10) & 0x1f;
  const frac = bits & 0x3ff;
  if (exp === 0) return sign * frac * 2 ** -24;
  if (exp === 0x1f) return frac ? Number.NaN : sign * Number.POSITIVE_INFINITY;
  return roundToFloat16(sign * (1 + frac / 1024) * 2 ** (exp - 15));
}

/** The array of a message with a shape and no values: only a shape of zero elements is one. */
function emptyArrayOfShape(shape: readonly number[]): NDArray {
  const dims = shape.length > 0 ? shape : [0];
  if (dims.some((n) => !Number.isSafeInteger(n) || n < 0)) {
    throw new BadInput(`NDArray message shape ${formatShape(dims)} is not a shape`);
  }
  if (!dims.includes(0)) {
    throw new BadInput(
      `NDArray message has shape ${formatShape(dims)} but no values; the values must match the shape`,
    );
  }
  return new NDArray(new Float64Array(0), [...dims], 'float64');
}
