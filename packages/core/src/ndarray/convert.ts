import { JsonFloat } from '../encoding/json-float.js';
import { BadInput } from '../errors/index.js';
import {
  allocate,
  type DType,
  formatShape,
  integerRange,
  isBigIntDType,
  type NDArrayData,
  roundToFloat16,
} from './dtype.js';
import { valueToText } from './text.js';

/** A value could not be converted to the requested dtype (docs/spec/io-descriptors.md §2.3 "conversion failure"). */
export class DTypeConversionError extends BadInput {}

/** A nested sequence whose lists do not all have the same length at a level. */
export class RaggedArrayError extends BadInput {}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const TWO_63 = 2 ** 63;

/** Lists inside nested input: JS arrays and typed arrays. */
function isList(value: unknown): value is ArrayLike<unknown> {
  return Array.isArray(value) || (ArrayBuffer.isView(value) && !(value instanceof DataView));
}

/** Shape and row-major leaves of a nested list; ragged nesting → RaggedArrayError. */
export function flattenNested(value: unknown): { shape: number[]; leaves: unknown[] } {
  const shape: number[] = [];
  let probe: unknown = value;
  while (isList(probe)) {
    shape.push(probe.length);
    if (probe.length === 0) break;
    probe = probe[0];
  }
  if (shape.length === 0) return { shape, leaves: [value] };
  const leaves: unknown[] = [];
  const walk = (node: unknown, depth: number, path: number[]): void => {
    if (depth === shape.length) {
      if (isList(node)) throw raggedError(shape, path, `a value, got a list of length ${node.length}`);
      leaves.push(node);
      return;
    }
    if (!isList(node)) throw raggedError(shape, path, `a list of length ${shape[depth]}, got a value`);
    if (node.length !== shape[depth]) {
      throw raggedError(shape, path, `a list of length ${shape[depth]}, got length ${node.length}`);
    }
    if (depth === shape.length - 1 && !Array.isArray(node)) {
      // A typed array as the innermost list: its elements are numbers/bigints, never lists.
      for (let i = 0; i < node.length; i++) leaves.push(node[i]);
      return;
    }
    for (let i = 0; i < node.length; i++) {
      path.push(i);
      walk(node[i], depth + 1, path);
      path.pop();
    }
  };
  walk(value, 0, []);
  return { shape, leaves };
}

/**
 * The common case without the general machinery: a regular nested list of JS numbers going to float64 or
 * float32 (asked for, or inferred because some value is not an integer). Writes straight into the typed
 * array — no intermediate list of leaves — and returns null for anything else (ragged lists, non-numbers,
 * all-integer input to infer), which the general path then handles with its own rules and errors.
 */
export function fillFloats(
  value: unknown,
  dtype: 'float32' | 'float64' | undefined,
): { shape: number[]; data: Float32Array | Float64Array } | null {
  const shape: number[] = [];
  let probe: unknown = value;
  while (Array.isArray(probe)) {
    shape.push(probe.length);
    if (probe.length === 0) return null;
    probe = probe[0];
  }
  if (shape.length === 0 || typeof probe !== 'number') return null;
  let size = 1;
  for (const n of shape) size *= n;
  const data = dtype === 'float32' ? new Float32Array(size) : new Float64Array(size);
  let at = 0;
  let integersOnly = true;
  const last = shape.length - 1;
  const walk = (node: unknown, depth: number): boolean => {
    if (!Array.isArray(node) || node.length !== shape[depth]) return false;
    if (depth === last) {
      for (let i = 0; i < node.length; i++) {
        const v: unknown = node[i];
        if (typeof v !== 'number') return false;
        if (integersOnly && !Number.isInteger(v)) integersOnly = false;
        data[at++] = v;
      }
      return true;
    }
    for (let i = 0; i < node.length; i++) if (!walk(node[i], depth + 1)) return false;
    return true;
  };
  if (!walk(value, 0)) return null;
  // Inference makes all-integer input int64 (docs/spec/io-descriptors.md §2.2): not ours to decide here.
  if (dtype === undefined && integersOnly) return null;
  return { shape, data };
}

function raggedError(shape: number[], path: number[], what: string): RaggedArrayError {
  return new RaggedArrayError(
    `Ragged nested sequence: expected ${what} at index [${path.join(', ')}] (shape of the first elements is ${formatShape(shape)}); all lists at one level must have the same length`,
  );
}

/** docs/spec/io-descriptors.md §2.2: the dtype JSON leaves infer to. */
export function inferDType(leaves: readonly unknown[]): DType {
  let bool = false;
  let int = false;
  let float = false;
  let str = false;
  let beyondInt64 = false;
  for (const leaf of leaves) {
    switch (typeof leaf) {
      case 'boolean':
        bool = true;
        break;
      case 'number':
        if (Number.isInteger(leaf)) {
          int = true;
          if (Math.abs(leaf) >= TWO_63 && leaf !== -TWO_63) beyondInt64 = true;
        } else float = true;
        break;
      case 'bigint':
        int = true;
        if (leaf < INT64_MIN || leaf > INT64_MAX) beyondInt64 = true;
        break;
      case 'string':
        str = true;
        break;
      default:
        if (leaf instanceof JsonFloat) float = true;
        else return 'object';
    }
  }
  if (str) return 'str';
  if (float) return 'float64';
  if (int) return beyondInt64 ? 'float64' : 'int64';
  if (bool) return 'bool';
  return 'float64';
}

/** Fill storage of `dtype` from leaves with the conversion rules of docs/spec/io-descriptors.md §2.3; failure → DTypeConversionError. */
export function convertLeaves(
  leaves: readonly unknown[],
  dtype: DType,
  shape: readonly number[],
): NDArrayData {
  const out = allocate(dtype, leaves.length);
  const failAt = (i: number, reason: string): never => {
    throw new DTypeConversionError(
      `Cannot convert ${describe(leaves[i])} at flat index ${i} of an array of shape ${formatShape(shape)} to ${dtype}: ${reason}`,
    );
  };
  switch (dtype) {
    case 'str': {
      const s = out as string[];
      for (let i = 0; i < leaves.length; i++) s[i] = valueToText(leaves[i]);
      return s;
    }
    case 'object': {
      const o = out as unknown[];
      for (let i = 0; i < leaves.length; i++) o[i] = unwrap(leaves[i]);
      return o;
    }
    case 'bool': {
      const b = out as Uint8Array;
      for (let i = 0; i < leaves.length; i++) b[i] = truthy(leaves[i]) ? 1 : 0;
      return b;
    }
    case 'float16':
    case 'float32':
    case 'float64': {
      const f = out as Float32Array | Float64Array;
      const half = dtype === 'float16';
      for (let i = 0; i < leaves.length; i++) {
        const v = toFloat(leaves[i]);
        if (v === undefined) failAt(i, 'not a number');
        f[i] = half ? roundToFloat16(v as number) : (v as number);
      }
      return f;
    }
    default: {
      const { min, max } = integerRange(dtype);
      const big = isBigIntDType(dtype);
      const target = out as Exclude<NDArrayData, string[] | unknown[] | Float32Array | Float64Array>;
      for (let i = 0; i < leaves.length; i++) {
        const v = toInteger(leaves[i]);
        if (typeof v === 'string') failAt(i, v);
        const n = v as bigint | number;
        if (n < min || n > max) failAt(i, `out of range for ${dtype} [${min}, ${max}]`);
        if (big) (target as BigInt64Array)[i] = BigInt(n);
        else (target as Int32Array)[i] = Number(n);
      }
      return target;
    }
  }
}

function describe(leaf: unknown): string {
  if (typeof leaf === 'string') return JSON.stringify(leaf);
  if (leaf instanceof JsonFloat) return String(leaf.value);
  if (typeof leaf === 'bigint') return leaf.toString();
  if (leaf === null || leaf === undefined) return 'null';
  if (typeof leaf === 'object') return 'an object';
  return String(leaf);
}

export function unwrap(leaf: unknown): unknown {
  return leaf instanceof JsonFloat ? leaf.value : leaf;
}

/** docs/spec/io-descriptors.md §2.3 "to bool": truthiness, where strings are true when non-empty. */
export function truthy(leaf: unknown): boolean {
  if (leaf instanceof JsonFloat) return leaf.value !== 0;
  if (leaf === null || leaf === undefined) return false;
  if (typeof leaf === 'object') return isList(leaf) ? leaf.length > 0 : Object.keys(leaf).length > 0;
  return Boolean(leaf);
}

const FLOAT_TEXT = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;
const SPECIAL_FLOAT = /^([+-]?)(nan|inf|infinity)$/i;

/** docs/spec/io-descriptors.md §2.3 "to float"; undefined = conversion failure. */
export function toFloat(leaf: unknown): number | undefined {
  switch (typeof leaf) {
    case 'number':
      return leaf;
    case 'boolean':
      return leaf ? 1 : 0;
    case 'bigint':
      return Number(leaf);
    case 'string': {
      const t = leaf.trim();
      if (FLOAT_TEXT.test(t)) return Number(t);
      const m = SPECIAL_FLOAT.exec(t);
      if (!m) return undefined;
      if (m[2]!.toLowerCase() === 'nan') return Number.NaN;
      return m[1] === '-' ? Number.NEGATIVE_INFINITY : Number.POSITIVE_INFINITY;
    }
    default:
      if (leaf instanceof JsonFloat) return leaf.value;
      if (leaf === null) return Number.NaN;
      return undefined;
  }
}

const INT_TEXT = /^[+-]?\d+$/;

/** docs/spec/io-descriptors.md §2.3 "to int": an integer (number when safe, else bigint) or a failure reason. */
export function toInteger(leaf: unknown): number | bigint | string {
  switch (typeof leaf) {
    case 'boolean':
      return leaf ? 1 : 0;
    case 'bigint':
      return leaf;
    case 'number':
      if (!Number.isFinite(leaf)) return `${leaf} cannot be an integer`;
      return exactInteger(Math.trunc(leaf));
    case 'string': {
      const t = leaf.trim();
      if (!INT_TEXT.test(t)) return 'not an integer literal';
      const big = BigInt(t);
      return Number.isSafeInteger(Number(big)) ? Number(big) : big;
    }
    default:
      if (leaf instanceof JsonFloat) return exactInteger(Math.trunc(leaf.value));
      if (leaf === null || leaf === undefined) return 'null is not an integer';
      return 'not a number';
  }
}

function exactInteger(n: number): number | bigint {
  return Number.isSafeInteger(n) ? (Object.is(n, -0) ? 0 : n) : BigInt(n);
}
