import { InvalidArgument } from '../errors/index.js';
import { convertLeaves, fillFloats, flattenNested, inferDType } from './convert.js';
import {
  allocate,
  type DType,
  type DTypeStorage,
  dtypeOfTypedArray,
  formatShape,
  isBigIntDType,
  isFloatDType,
  type NDArrayData,
  normalizeDType,
  roundToFloat16,
  storageMatches,
  type TypedArray,
} from './dtype.js';
import { formatNarrowFloat, formatPyFloat, valueToText } from './text.js';

/** A scalar element as `toArray()` returns it. int64/uint64 values are numbers when safe, else bigints. */
export type NDArrayElement = number | bigint | boolean | string | unknown;

/** Nested JS arrays (or a scalar for 0-d arrays). */
export type NestedArray = NDArrayElement | NestedArray[];

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
const MIN_SAFE = -MAX_SAFE;

/**
 * An n-dimensional array: row-major storage in a typed array (`data`, zero-copy), a `shape` and a numpy
 * `dtype` name. `str` arrays keep a `string[]`, `object` arrays an `unknown[]`; int64/uint64 use
 * BigInt64Array/BigUint64Array so values beyond 2^53 stay exact; float16 values live in a Float32Array,
 * rounded to half precision.
 */
export class NDArray<D extends DType = DType> {
  readonly dtype: D;
  readonly shape: readonly number[];
  readonly data: DTypeStorage[D];

  /** Wrap existing storage without copying. `shape` defaults to 1-d; `dtype` defaults to the storage's. */
  constructor(data: DTypeStorage[D], shape?: readonly number[], dtype?: D) {
    const dt = (dtype ??
      (Array.isArray(data) ? inferStorageDType(data) : dtypeOfTypedArray(data as TypedArray))) as D;
    if (!storageMatches(dt, data)) {
      throw new InvalidArgument(`NDArray: storage ${describeStorage(data)} cannot hold dtype ${dt}`);
    }
    const sh = shape ? [...shape] : [data.length];
    if (sh.some((n) => !Number.isInteger(n) || n < 0)) {
      throw new InvalidArgument(`NDArray: invalid shape ${formatShape(sh)}`);
    }
    const size = sh.reduce((a, b) => a * b, 1);
    if (size !== data.length) {
      throw new InvalidArgument(
        `NDArray: shape ${formatShape(sh)} needs ${size} elements, storage has ${data.length}`,
      );
    }
    this.dtype = dt;
    this.shape = Object.freeze(sh);
    this.data = data;
  }

  /**
   * Build from nested JS arrays, a typed array, a scalar or another NDArray. Without `dtype` the dtype is
   * inferred (docs/spec/io-descriptors.md §2.2: bools → bool, integers → int64, any float → float64, any string → str, any
   * null/object → object). JS cannot tell `2.0` from `2`, so integral numbers count as integers.
   * With `dtype` the values are converted (docs/spec/io-descriptors.md §2.3); failure → DTypeConversionError (a BadInput).
   */
  static from<T extends DType = DType>(value: unknown, dtype?: T | string): NDArray<T> {
    const want = dtype === undefined ? undefined : (normalizeDType(dtype) as T);
    if (value instanceof NDArray) return (want ? value.astype(want) : value) as NDArray<T>;
    if (ArrayBuffer.isView(value) && !(value instanceof DataView)) {
      const arr = new NDArray(value as TypedArray as DTypeStorage[DType]);
      return (want ? arr.astype(want) : arr) as NDArray<T>;
    }
    if (want === undefined || want === 'float64' || want === 'float32') {
      const filled = fillFloats(value, want);
      if (filled) {
        const dt = (want ?? 'float64') as T;
        return new NDArray(filled.data as DTypeStorage[T], filled.shape, dt);
      }
    }
    const { shape, leaves } = flattenNested(value);
    const dt = want ?? (inferDType(leaves) as T);
    return new NDArray(convertLeaves(leaves, dt, shape) as DTypeStorage[T], shape, dt);
  }

  /** A zero-filled array (empty strings for str, null for object). */
  static zeros<T extends DType>(shape: readonly number[], dtype: T): NDArray<T> {
    return new NDArray(
      allocate(
        dtype,
        shape.reduce((a, b) => a * b, 1),
      ),
      shape,
      dtype,
    );
  }

  get size(): number {
    return this.data.length;
  }

  get ndim(): number {
    return this.shape.length;
  }

  /** Element `i` of the flat storage in its JS form (bool → boolean, int64 → number if safe else bigint). */
  at(i: number): NDArrayElement {
    const v = (this.data as ArrayLike<unknown>)[i];
    if (this.dtype === 'bool') return v === 1;
    if (typeof v === 'bigint') return v >= MIN_SAFE && v <= MAX_SAFE ? Number(v) : v;
    return v;
  }

  /** Nested JS arrays; a 0-d array gives its scalar. int64/uint64 values beyond 2^53 come back as bigint. */
  toArray(): NestedArray {
    if (this.shape.length === 0) return this.at(0);
    let index = 0;
    const build = (depth: number): NestedArray[] => {
      const n = this.shape[depth]!;
      const out = new Array<NestedArray>(n);
      if (depth === this.shape.length - 1) {
        for (let i = 0; i < n; i++) out[i] = this.at(index++);
      } else {
        for (let i = 0; i < n; i++) out[i] = build(depth + 1);
      }
      return out;
    };
    return build(0);
  }

  /** JSON.stringify support: nested lists, unsafe 64-bit integers as decimal strings. */
  toJSON(): unknown {
    return jsonSafe(this.toArray());
  }

  /** Same storage (no copy), new shape; one -1 is inferred from the size. */
  reshape(shape: readonly number[]): NDArray<D> {
    return new NDArray(this.data, resolveShape(shape, this.size), this.dtype);
  }

  /**
   * Cast to another dtype (always a copy). Numbers → str use the reference's text form (`1.5`, `True`);
   * float → int truncates; integers narrow with wrap-around (int64 300 → int8 44); bool → 0/1; str/object
   * → numbers parse as docs/spec/io-descriptors.md §2.3 says, failure → DTypeConversionError.
   */
  astype<T extends DType>(dtype: T | string): NDArray<T> {
    const to = normalizeDType(dtype) as T;
    return new NDArray(castStorage(this, to) as DTypeStorage[T], this.shape, to);
  }

  toString(): string {
    return `NDArray(${JSON.stringify(this.toJSON())}, dtype=${this.dtype}, shape=${formatShape(this.shape)})`;
  }
}

function inferStorageDType(data: unknown[]): DType {
  return data.every((v) => typeof v === 'string') ? 'str' : 'object';
}

function describeStorage(data: unknown): string {
  return Array.isArray(data) ? 'Array' : ((data as object)?.constructor?.name ?? typeof data);
}

/** Resolve a target shape against a size (one -1 inferred); impossible → InvalidArgument. */
export function resolveShape(shape: readonly number[], size: number): number[] {
  const wild = shape.filter((n) => n === -1).length;
  const bad = () =>
    new InvalidArgument(`cannot reshape array of size ${size} into shape ${formatShape(shape)}`);
  if (wild > 1 || shape.some((n) => !Number.isInteger(n) || n < -1)) throw bad();
  const known = shape.reduce((a, n) => (n === -1 ? a : a * n), 1);
  if (wild === 1) {
    if (known === 0 || size % known !== 0) throw bad();
    return shape.map((n) => (n === -1 ? size / known : n));
  }
  if (known !== size) throw bad();
  return [...shape];
}

function jsonSafe(value: unknown): unknown {
  if (typeof value === 'bigint') return value.toString();
  if (Array.isArray(value)) return value.map(jsonSafe);
  return value;
}

/** Text of element `i` for a cast to str: floats in their own precision (float32 0.1 → "0.1"). */
function elementText(arr: NDArray, i: number): string {
  const v = arr.at(i);
  if (typeof v === 'number' && isFloatDType(arr.dtype)) {
    if (arr.dtype === 'float64') return formatPyFloat(v);
    return formatNarrowFloat(v, arr.dtype === 'float32' ? 32 : 16);
  }
  return valueToText(v);
}

function castStorage(arr: NDArray, to: DType): NDArrayData {
  const from = arr.dtype;
  const n = arr.size;
  if (to === 'str') {
    const out = new Array<string>(n);
    for (let i = 0; i < n; i++) out[i] = elementText(arr, i);
    return out;
  }
  if (to === 'object') {
    const out = new Array<unknown>(n);
    for (let i = 0; i < n; i++) out[i] = arr.at(i);
    return out;
  }
  if (from === 'str' || from === 'object') {
    return convertLeaves(arr.data as unknown[], to, arr.shape);
  }
  const src = arr.data as TypedArray;
  const out = allocate(to, n);
  if (to === 'bool') {
    const b = out as Uint8Array;
    for (let i = 0; i < n; i++) b[i] = src[i] ? 1 : 0;
    return b;
  }
  if (to === 'float16') {
    const f = out as Float32Array;
    for (let i = 0; i < n; i++) f[i] = roundToFloat16(Number(src[i]));
    return f;
  }
  if (isBigIntDType(to)) {
    const big = out as BigInt64Array | BigUint64Array;
    const wrap = to === 'int64' ? BigInt.asIntN : BigInt.asUintN;
    for (let i = 0; i < n; i++) {
      const v = src[i]!;
      big[i] = wrap(64, typeof v === 'bigint' ? v : Number.isFinite(v) ? BigInt(Math.trunc(v)) : 0n);
    }
    return big;
  }
  if (isBigIntDType(from)) {
    const t = out as Int32Array | Float64Array;
    if (isFloatDType(to)) for (let i = 0; i < n; i++) t[i] = Number(src[i]);
    // Keep the low 32 bits exactly; the typed array then wraps to its own width.
    else for (let i = 0; i < n; i++) t[i] = Number(BigInt.asIntN(32, src[i] as bigint));
    return t;
  }
  // Typed-array assignment truncates floats and wraps integers modulo 2^bits, as numpy's casts do.
  (out as Float64Array).set(src as Float64Array);
  return out;
}
