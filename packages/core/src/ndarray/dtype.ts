import { UnprocessableEntity } from '../errors/index.js';

/**
 * Array element types, by their numpy names (docs/spec/io-descriptors.md §2.2). `float16` values are stored in a Float32Array,
 * rounded to half precision; `int64`/`uint64` in BigInt64Array/BigUint64Array so they stay exact.
 * Complex dtypes are not supported (no typed array carries them).
 */
export type DType =
  | 'bool'
  | 'int8'
  | 'int16'
  | 'int32'
  | 'int64'
  | 'uint8'
  | 'uint16'
  | 'uint32'
  | 'uint64'
  | 'float16'
  | 'float32'
  | 'float64'
  | 'str'
  | 'object';

/** numpy's dtype kind letters: bool, signed, unsigned, float, unicode string, object. */
export type DTypeKind = 'b' | 'i' | 'u' | 'f' | 'U' | 'O';

export type IntDType = 'int8' | 'int16' | 'int32' | 'int64' | 'uint8' | 'uint16' | 'uint32' | 'uint64';
export type FloatDType = 'float16' | 'float32' | 'float64';
export type NumericDType = 'bool' | IntDType | FloatDType;

/** The storage each dtype uses for `.data`. */
export interface DTypeStorage {
  bool: Uint8Array;
  int8: Int8Array;
  int16: Int16Array;
  int32: Int32Array;
  int64: BigInt64Array;
  uint8: Uint8Array;
  uint16: Uint16Array;
  uint32: Uint32Array;
  uint64: BigUint64Array;
  float16: Float32Array;
  float32: Float32Array;
  float64: Float64Array;
  str: string[];
  object: unknown[];
}

export type TypedArray =
  | Uint8Array
  | Int8Array
  | Int16Array
  | Int32Array
  | BigInt64Array
  | Uint16Array
  | Uint32Array
  | BigUint64Array
  | Float32Array
  | Float64Array;

/** Storage of any dtype. */
export type NDArrayData = TypedArray | string[] | unknown[];

export const DTYPES: readonly DType[] = [
  'bool',
  'int8',
  'int16',
  'int32',
  'int64',
  'uint8',
  'uint16',
  'uint32',
  'uint64',
  'float16',
  'float32',
  'float64',
  'str',
  'object',
];

const KIND: Record<DType, DTypeKind> = {
  bool: 'b',
  int8: 'i',
  int16: 'i',
  int32: 'i',
  int64: 'i',
  uint8: 'u',
  uint16: 'u',
  uint32: 'u',
  uint64: 'u',
  float16: 'f',
  float32: 'f',
  float64: 'f',
  str: 'U',
  object: 'O',
};

/** docs/spec/io-descriptors.md §2.2 aliases (numpy spellings) → canonical names. */
const ALIASES: Record<string, DType> = {
  bool: 'bool',
  bool_: 'bool',
  '?': 'bool',
  b1: 'bool',
  int8: 'int8',
  i1: 'int8',
  byte: 'int8',
  int16: 'int16',
  i2: 'int16',
  short: 'int16',
  int32: 'int32',
  i4: 'int32',
  intc: 'int32',
  int64: 'int64',
  i8: 'int64',
  int: 'int64',
  int_: 'int64',
  long: 'int64',
  longlong: 'int64',
  uint8: 'uint8',
  u1: 'uint8',
  ubyte: 'uint8',
  uint16: 'uint16',
  u2: 'uint16',
  ushort: 'uint16',
  uint32: 'uint32',
  u4: 'uint32',
  uintc: 'uint32',
  uint64: 'uint64',
  u8: 'uint64',
  uint: 'uint64',
  ulonglong: 'uint64',
  float16: 'float16',
  f2: 'float16',
  half: 'float16',
  float32: 'float32',
  f4: 'float32',
  single: 'float32',
  float64: 'float64',
  f8: 'float64',
  float: 'float64',
  double: 'float64',
  float_: 'float64',
  str: 'str',
  str_: 'str',
  U: 'str',
  '<U': 'str',
  unicode: 'str',
  string: 'str',
  object: 'object',
  object_: 'object',
  O: 'object',
};

const COMPLEX = new Set(['complex', 'complex64', 'complex128', 'c8', 'c16', 'complex_', 'cfloat', 'cdouble']);

/**
 * Canonical dtype for a name or alias (docs/spec/io-descriptors.md §2.2). Byte-order prefixes (`<f8`, `=i4`) and numpy widths of
 * strings (`<U21`) are accepted. An unknown name → UnprocessableEntity (docs/spec/io-descriptors.md §2.1).
 */
export function normalizeDType(value: string): DType {
  if (typeof value !== 'string') {
    throw new UnprocessableEntity(`Invalid dtype "${String(value)}": a dtype is a name such as "float32"`);
  }
  const direct = ALIASES[value];
  if (direct) return direct;
  let name = value.trim();
  if (/^[<>=|]/.test(name) && name.length > 1) name = name.slice(1);
  if (/^U\d+$/.test(name)) return 'str';
  const found = ALIASES[name] ?? ALIASES[name.toLowerCase()];
  if (found) return found;
  if (COMPLEX.has(name.toLowerCase())) {
    throw new UnprocessableEntity(`Invalid dtype "${value}": complex dtypes are not supported`);
  }
  throw new UnprocessableEntity(
    `Invalid dtype "${value}": data type not understood (use one of ${DTYPES.join(', ')})`,
  );
}

export function isDType(value: unknown): value is DType {
  return typeof value === 'string' && (DTYPES as readonly string[]).includes(value);
}

export function dtypeKind(dtype: DType): DTypeKind {
  return KIND[dtype];
}

export function isIntegerDType(dtype: DType): dtype is IntDType {
  const k = KIND[dtype];
  return k === 'i' || k === 'u';
}

export function isFloatDType(dtype: DType): dtype is FloatDType {
  return KIND[dtype] === 'f';
}

/** Dtypes whose storage is a BigInt typed array. */
export function isBigIntDType(dtype: DType): dtype is 'int64' | 'uint64' {
  return dtype === 'int64' || dtype === 'uint64';
}

/** Inclusive integer range of an integer dtype. */
export function integerRange(dtype: IntDType): { min: bigint; max: bigint } {
  const bits = BigInt(Number(dtype.replace(/^u?int/, '')));
  if (dtype.startsWith('u')) return { min: 0n, max: (1n << bits) - 1n };
  return { min: -(1n << (bits - 1n)), max: (1n << (bits - 1n)) - 1n };
}

/** Bytes per element (raw little-endian buffers, gRPC `serialized_bytes`); null for str/object. */
export function itemSize(dtype: DType): number | null {
  switch (dtype) {
    case 'bool':
    case 'int8':
    case 'uint8':
      return 1;
    case 'int16':
    case 'uint16':
    case 'float16':
      return 2;
    case 'int32':
    case 'uint32':
    case 'float32':
      return 4;
    case 'int64':
    case 'uint64':
    case 'float64':
      return 8;
    default:
      return null;
  }
}

/** Fresh zeroed storage of `size` elements. */
export function allocate<D extends DType>(dtype: D, size: number): DTypeStorage[D];
export function allocate(dtype: DType, size: number): NDArrayData {
  switch (dtype) {
    case 'bool':
    case 'uint8':
      return new Uint8Array(size);
    case 'int8':
      return new Int8Array(size);
    case 'int16':
      return new Int16Array(size);
    case 'int32':
      return new Int32Array(size);
    case 'int64':
      return new BigInt64Array(size);
    case 'uint16':
      return new Uint16Array(size);
    case 'uint32':
      return new Uint32Array(size);
    case 'uint64':
      return new BigUint64Array(size);
    case 'float16':
    case 'float32':
      return new Float32Array(size);
    case 'float64':
      return new Float64Array(size);
    case 'str':
      return new Array<string>(size).fill('');
    case 'object':
      return new Array<unknown>(size).fill(null);
  }
}

/** The dtype a typed array stores (Uint8Array → uint8; Float32Array → float32). */
export function dtypeOfTypedArray(data: TypedArray): DType {
  if (data instanceof Int8Array) return 'int8';
  if (data instanceof Uint8Array || data instanceof Uint8ClampedArray) return 'uint8';
  if (data instanceof Int16Array) return 'int16';
  if (data instanceof Uint16Array) return 'uint16';
  if (data instanceof Int32Array) return 'int32';
  if (data instanceof Uint32Array) return 'uint32';
  if (data instanceof BigInt64Array) return 'int64';
  if (data instanceof BigUint64Array) return 'uint64';
  if (data instanceof Float32Array) return 'float32';
  return 'float64';
}

/** True when `data` is the storage class `dtype` uses. */
export function storageMatches(dtype: DType, data: unknown): boolean {
  switch (dtype) {
    case 'bool':
    case 'uint8':
      return data instanceof Uint8Array;
    case 'float16':
      return data instanceof Float32Array;
    case 'str':
    case 'object':
      return Array.isArray(data);
    default:
      return ArrayBuffer.isView(data) && dtypeOfTypedArray(data as TypedArray) === dtype;
  }
}

/**
 * docs/spec/io-descriptors.md §2.4 same-kind casting: may an array of `from` be cast to `to` without changing the kind of value
 * (bool → anything numeric; uint → int; int/uint → float; anything but object → str; anything → object).
 * Narrowing within a kind is allowed (int64 → int8 wraps).
 */
export function canCastSameKind(from: DType, to: DType): boolean {
  if (from === to) return true;
  const f = KIND[from];
  const t = KIND[to];
  if (t === 'O') return true;
  if (t === 'U') return f !== 'O';
  switch (f) {
    case 'b':
      return t === 'b' || t === 'i' || t === 'u' || t === 'f';
    case 'i':
      return t === 'i' || t === 'f';
    case 'u':
      return t === 'i' || t === 'u' || t === 'f';
    case 'f':
      return t === 'f';
    default:
      return false;
  }
}

/** Shapes as the host language prints tuples: `(2, 2)`, `(4,)`, `()`, `(-1, 2)`. */
export function formatShape(shape: readonly number[]): string {
  if (shape.length === 1) return `(${shape[0]},)`;
  return `(${shape.join(', ')})`;
}

/** Two shapes match when they have the same rank and each size is equal or either is -1 (docs/spec/io-descriptors.md §2.4). */
export function shapesMatch(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((n, i) => n === b[i] || n === -1 || b[i] === -1);
}

const HALF_MAX = 65504;

/** Round a number to the nearest float16 value (ties to even), as numpy stores half floats. */
export function roundToFloat16(x: number): number {
  if (!Number.isFinite(x) || x === 0) return x;
  const abs = Math.abs(x);
  let e = Math.floor(Math.log2(abs));
  if (2 ** e > abs) e--;
  else if (2 ** (e + 1) <= abs) e++;
  // 10 mantissa bits; below 2^-14 the spacing is fixed (subnormals).
  const quantum = 2 ** (Math.max(e, -14) - 10);
  const r = abs / quantum;
  let f = Math.floor(r);
  const diff = r - f;
  if (diff > 0.5 || (diff === 0.5 && f % 2 === 1)) f++;
  const rounded = f * quantum;
  const out = rounded > HALF_MAX ? Number.POSITIVE_INFINITY : rounded;
  return x < 0 ? -out : out;
}
