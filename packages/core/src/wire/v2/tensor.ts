import { plainArray } from '../../encoding/plain-array.js';
import { BadInput } from '../../errors/index.js';
import { allocate, type DType, type DTypeStorage } from '../../ndarray/dtype.js';
import { NDArray } from '../../ndarray/ndarray.js';
import { type Datatype, datatypeOf, dtypeOf, ELEMENT_SIZE } from './datatype.js';
import { fromHalfBits, toHalfBits } from './half-float.js';

/** Parameters of a tensor or request (`binary_data_size`, `binary_data`, ...). */
export type Parameters = Record<string, unknown>;

/** An input tensor's header as a request gives it (data still raw). */
export interface TensorHeader {
  name: string;
  shape: number[];
  datatype: Datatype;
  parameters: Parameters;
  /** JSON `data`, absent in the binary form. */
  data: unknown;
}

/** A tensor as model metadata lists it (`$metadata_tensor`); -1 is a dimension of any size. */
export interface TensorMetadata {
  name: string;
  datatype: Datatype;
  shape: number[];
}

/** A tensor decoded into an NDArray of its shape. */
export interface Tensor {
  name: string;
  array: NDArray;
}

const MAX_DIMS = 32;
const MAX_NESTING = 64;
/**
 * The most elements one dimension, and the non-zero dimensions of a shape together, may declare: what typed
 * arrays and onnxruntime index. A tensor of zero elements carries no data, so the body cannot bound its other
 * dimensions (`[1, 3, 0, 2^40]`): this does, before any runtime sees them.
 */
const MAX_EXTENT = 2 ** 31 - 1;

/** Whether a shape's dimensions stay within {@link MAX_EXTENT}, alone and multiplied (zeros left out). */
function shapeWithinExtent(shape: readonly number[]): boolean {
  let product = 1;
  for (const n of shape) {
    if (n === 0) continue;
    product *= n;
    if (product > MAX_EXTENT) return false;
  }
  return true;
}

/** Integer datatypes: their JSON `data` must hold whole numbers (1.5 is not an INT32, and is not cut to 1). */
const INTEGER_DATATYPES: ReadonlySet<Datatype> = new Set([
  'INT8',
  'INT16',
  'INT32',
  'INT64',
  'UINT8',
  'UINT16',
  'UINT32',
  'UINT64',
]);

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Checks one entry of `inputs` (the protocol's `$request_input`); anything malformed is a 400. */
export function readTensorHeader(value: unknown, index: number): TensorHeader {
  if (!isObject(value)) throw new BadInput(`inputs[${index}] must be an object`);
  const { name, shape, datatype, parameters, data } = value;
  if (typeof name !== 'string' || name === '')
    throw new BadInput(`inputs[${index}].name must be a non-empty string`);
  if (
    !Array.isArray(shape) ||
    shape.length > MAX_DIMS ||
    !shape.every((n) => Number.isSafeInteger(n) && (n as number) >= 0)
  ) {
    throw new BadInput(`Tensor '${name}': shape must be a list of at most ${MAX_DIMS} non-negative integers`);
  }
  if (!shapeWithinExtent(shape as number[])) {
    throw new BadInput(
      `Tensor '${name}': shape [${shape.join(', ')}] declares more than ${MAX_EXTENT} elements (zero dimensions left out)`,
      { code: 'TENSOR_SHAPE_TOO_LARGE' },
    );
  }
  dtypeOf(datatype, name);
  if (parameters !== undefined && !isObject(parameters)) {
    throw new BadInput(`Tensor '${name}': parameters must be an object`);
  }
  return {
    name,
    shape: shape as number[],
    datatype: datatype as Datatype,
    parameters: parameters ?? {},
    data,
  };
}

export function elementCount(shape: readonly number[]): number {
  return shape.reduce((a, b) => a * b, 1);
}

/** Row-major flattening of JSON `data` (nested or flat), iterative so deep nesting cannot overflow the stack. */
function flatten(data: unknown, name: string): unknown[] {
  if (!Array.isArray(data)) throw new BadInput(`Tensor '${name}': data must be a list`);
  if (!data.some(Array.isArray)) return data;
  const out: unknown[] = [];
  const stack: Array<{ list: unknown[]; i: number }> = [{ list: data, i: 0 }];
  while (stack.length > 0) {
    const top = stack[stack.length - 1]!;
    if (top.i >= top.list.length) {
      stack.pop();
      continue;
    }
    const item = top.list[top.i++];
    if (Array.isArray(item)) {
      if (stack.length >= MAX_NESTING) throw new BadInput(`Tensor '${name}': data nested too deeply`);
      stack.push({ list: item, i: 0 });
    } else out.push(item);
  }
  return out;
}

/** A tensor from its JSON `data`. */
export function tensorFromJson(header: TensorHeader): Tensor {
  const { name, shape, datatype } = header;
  if (header.data === undefined) throw new BadInput(`Tensor '${name}': no data (and no binary_data_size)`);
  const flat = flatten(header.data, name);
  const count = elementCount(shape);
  if (flat.length !== count) {
    throw new BadInput(
      `Tensor '${name}': shape [${shape.join(', ')}] needs ${count} elements, data has ${flat.length}`,
    );
  }
  if (datatype === 'BYTES' && !flat.every((v) => typeof v === 'string')) {
    throw new BadInput(`Tensor '${name}': BYTES data must be strings`);
  }
  if (datatype === 'BOOL' && !flat.every((v) => typeof v === 'boolean')) {
    throw new BadInput(`Tensor '${name}': BOOL data must be true/false`);
  }
  if (datatype !== 'BYTES' && datatype !== 'BOOL' && !flat.every((v) => typeof v === 'number')) {
    throw new BadInput(`Tensor '${name}': ${datatype} data must be numbers`);
  }
  if (INTEGER_DATATYPES.has(datatype)) {
    const at = flat.findIndex((v) => !Number.isInteger(v));
    if (at !== -1) {
      throw new BadInput(
        `Tensor '${name}': ${datatype} data must be whole numbers, got ${String(flat[at])} at index ${at}`,
        { code: 'TENSOR_DTYPE_MISMATCH' },
      );
    }
    // A JSON number holds integers exactly up to 2^53 - 1; past it the parser has already rounded the value
    // (9007199254740993 reads as …992), so it is refused rather than passed on changed.
    const inexact =
      (datatype === 'INT64' || datatype === 'UINT64') && flat.findIndex((v) => !Number.isSafeInteger(v));
    if (inexact !== false && inexact !== -1) {
      throw new BadInput(
        `Tensor '${name}': ${datatype} value at index ${inexact} is beyond ±${Number.MAX_SAFE_INTEGER}, which a JSON number cannot carry exactly; send this tensor in binary form (binary_data_size)`,
      );
    }
  }
  try {
    return { name, array: NDArray.from(flat, dtypeOf(datatype, name)).reshape(shape) };
  } catch (err) {
    throw new BadInput(`Tensor '${name}': ${(err as Error).message}`);
  }
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** A tensor from its bytes in the binary form (little-endian, row-major; BYTES elements length-prefixed). */
export function tensorFromBinary(header: TensorHeader, bytes: Uint8Array): Tensor {
  const { name, shape, datatype } = header;
  const count = elementCount(shape);
  const dtype = dtypeOf(datatype, name);
  if (datatype === 'BYTES') {
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const items: string[] = [];
    let at = 0;
    while (at < bytes.length) {
      if (at + 4 > bytes.length) throw new BadInput(`Tensor '${name}': truncated BYTES length prefix`);
      const length = view.getUint32(at, true);
      at += 4;
      if (at + length > bytes.length) throw new BadInput(`Tensor '${name}': BYTES element overruns its data`);
      try {
        items.push(utf8.decode(bytes.subarray(at, at + length)));
      } catch {
        throw new BadInput(`Tensor '${name}': BYTES element ${items.length} is not valid UTF-8`);
      }
      at += length;
    }
    if (items.length !== count) {
      throw new BadInput(`Tensor '${name}': shape needs ${count} elements, binary data has ${items.length}`);
    }
    return { name, array: new NDArray(items, shape, 'str') };
  }
  const size = ELEMENT_SIZE[datatype];
  if (bytes.length !== count * size) {
    throw new BadInput(
      `Tensor '${name}': shape [${shape.join(', ')}] of ${datatype} needs ${count * size} bytes, got ${bytes.length}`,
    );
  }
  const storage = allocate(dtype, count) as Exclude<DTypeStorage[DType], unknown[]>;
  if (datatype === 'FP16') {
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    for (let i = 0; i < count; i++) (storage as Float32Array)[i] = fromHalfBits(view.getUint16(i * 2, true));
  } else {
    // Copy into the (aligned) typed storage; the protocol's byte order is little-endian, as the host's.
    new Uint8Array(storage.buffer, storage.byteOffset, storage.byteLength).set(bytes);
    if (datatype === 'BOOL') for (let i = 0; i < count; i++) if (storage[i]) (storage as Uint8Array)[i] = 1;
  }
  return { name, array: new NDArray(storage as DTypeStorage[DType], shape, dtype) };
}

/** An output tensor's description without data (`$response_output` for the binary form). */
export function tensorHeaderJson(name: string, array: NDArray): Record<string, unknown> {
  return { name, datatype: datatypeOf(array.dtype), shape: [...array.shape] };
}

/** The JSON form of an output tensor (`$response_output` with flat `data`). */
export function tensorJson(name: string, array: NDArray): Record<string, unknown> {
  const data =
    array.dtype === 'bool'
      ? plainArray(array.data as Uint8Array, (v) => v === 1)
      : array.dtype === 'object'
        ? (array.data as unknown[]).map((v) => JSON.stringify(v) ?? 'null')
        : plainArray(array.data as ArrayLike<unknown>);
  return { ...tensorHeaderJson(name, array), data };
}

/** The bytes of an output tensor in the binary form. */
export function tensorBytes(array: NDArray): Uint8Array {
  const datatype = datatypeOf(array.dtype);
  if (datatype === 'BYTES') {
    const items = (array.data as unknown[]).map((v) =>
      Buffer.from(typeof v === 'string' ? v : (JSON.stringify(v) ?? 'null'), 'utf8'),
    );
    const out = Buffer.allocUnsafe(items.reduce((n, b) => n + 4 + b.length, 0));
    let at = 0;
    for (const item of items) {
      out.writeUInt32LE(item.length, at);
      item.copy(out, at + 4);
      at += 4 + item.length;
    }
    return out;
  }
  if (datatype === 'FP16') {
    const src = array.data as Float32Array;
    const out = Buffer.allocUnsafe(src.length * 2);
    for (let i = 0; i < src.length; i++) out.writeUInt16LE(toHalfBits(src[i]!), i * 2);
    return out;
  }
  const data = array.data as Exclude<DTypeStorage[DType], unknown[]>;
  return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
}
