import { defaultJsonEncoder } from '../encoding/json-encoder.js';
import { writeJson } from '../encoding/json-write.js';
import { plainArray } from '../encoding/plain-array.js';
import type { NDArray } from './ndarray.js';

/**
 * Compact JSON of an array's nested-list form (docs/spec/io-descriptors.md D3). Written directly from the storage: int64/uint64 values
 * keep all their digits (JSON numbers have no size limit), non-finite floats become null, floats are
 * written as JavaScript writes them (float32 values widened to double: 0.1 → 0.10000000149011612).
 */
export function ndarrayToJson(arr: NDArray): string {
  const leaf = leafWriter(arr);
  if (arr.shape.length === 0) return leaf(0);
  if (WRITTEN_BY_STRINGIFY.has(arr.dtype)) return rowsByStringify(arr);
  const parts: string[] = [];
  let index = 0;
  const shape = arr.shape;
  const write = (depth: number): void => {
    const n = shape[depth]!;
    parts.push('[');
    for (let i = 0; i < n; i++) {
      if (i > 0) parts.push(',');
      if (depth === shape.length - 1) parts.push(leaf(index++));
      else write(depth + 1);
    }
    parts.push(']');
  };
  write(0);
  return parts.join('');
}

/**
 * Dtypes whose values JSON.stringify writes exactly as `leafWriter` does (String(v) for finite numbers, null
 * otherwise): plain numbers in a typed array of their own (not bool, float16, int64/uint64, str, object).
 */
const WRITTEN_BY_STRINGIFY: ReadonlySet<string> = new Set([
  'float32',
  'float64',
  'int8',
  'int16',
  'int32',
  'uint8',
  'uint16',
  'uint32',
]);

/**
 * The same text, each innermost row written by JSON.stringify (native number formatting, one call per row
 * instead of a string and two array pushes per value: about a quarter faster on float rows).
 */
function rowsByStringify(arr: NDArray): string {
  const data = arr.data as Float64Array;
  const shape = arr.shape;
  const last = shape.length - 1;
  const rowLength = shape[last]!;
  const parts: string[] = [];
  let index = 0;
  const write = (depth: number): void => {
    if (depth === last) {
      parts.push(JSON.stringify(plainArray(data.subarray(index, index + rowLength))));
      index += rowLength;
      return;
    }
    const n = shape[depth]!;
    parts.push('[');
    for (let i = 0; i < n; i++) {
      if (i > 0) parts.push(',');
      write(depth + 1);
    }
    parts.push(']');
  };
  write(0);
  return parts.length === 1 ? parts[0]! : parts.join('');
}

function leafWriter(arr: NDArray): (i: number) => string {
  const data = arr.data as ArrayLike<unknown>;
  switch (arr.dtype) {
    case 'bool':
      return (i) => (data[i] ? 'true' : 'false');
    case 'str':
      return (i) => JSON.stringify(data[i]);
    case 'object':
      return (i) => writeJson(defaultJsonEncoder(data[i]));
    case 'int64':
    case 'uint64':
      return (i) => (data[i] as bigint).toString();
    default:
      return (i) => {
        const v = data[i] as number;
        return Number.isFinite(v) ? String(v) : 'null';
      };
  }
}
