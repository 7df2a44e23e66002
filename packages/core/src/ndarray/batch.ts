import { BadInput } from '../errors/index.js';
import { allocate, type DType, type DTypeStorage, formatShape } from './dtype.js';
import { NDArray } from './ndarray.js';

/** Storage as a flat, indexable sequence (typed array, or string/unknown array). */
type Flat = { length: number; [i: number]: unknown };

function product(shape: readonly number[], from: number, to: number): number {
  let n = 1;
  for (let i = from; i < to; i++) n *= shape[i]!;
  return n;
}

/** Copy `count` elements of `src` from `at` into `dst` at `to` (typed arrays copy as one block). */
function copy(dst: Flat, to: number, src: Flat, at: number, count: number): void {
  if (ArrayBuffer.isView(dst) && ArrayBuffer.isView(src)) {
    (dst as unknown as { set(a: ArrayLike<unknown>, o: number): void }).set(
      (src as unknown as { subarray(a: number, b: number): ArrayLike<unknown> }).subarray(at, at + count),
      to,
    );
    return;
  }
  for (let i = 0; i < count; i++) dst[to + i] = src[at + i];
}

/** Join arrays along `axis` (numpy.concatenate): same dtype, same shape but along `axis`. */
export function concatenate(arrays: readonly NDArray[], axis: number): NDArray {
  const first = arrays[0];
  if (!first) throw new BadInput('concatenate: no arrays');
  if (arrays.length === 1) return first;
  const shape = first.shape;
  if (axis >= shape.length) {
    throw new BadInput(`Cannot stack arrays of shape ${formatShape(shape)} along dimension ${axis}`);
  }
  let along = 0;
  for (const a of arrays) {
    const same =
      a.dtype === first.dtype &&
      a.shape.length === shape.length &&
      a.shape.every((n, i) => i === axis || n === shape[i]);
    if (!same) {
      throw new BadInput(
        `Cannot stack ${a.dtype} ${formatShape(a.shape)} with ${first.dtype} ${formatShape(shape)} along dimension ${axis}`,
      );
    }
    along += a.shape[axis]!;
  }
  const outer = product(shape, 0, axis);
  const inner = product(shape, axis + 1, shape.length);
  const out = allocate(first.dtype, outer * along * inner) as Flat;
  let to = 0;
  for (let o = 0; o < outer; o++) {
    for (const a of arrays) {
      const block = a.shape[axis]! * inner;
      copy(out, to, a.data as Flat, o * block, block);
      to += block;
    }
  }
  const outShape = [...shape];
  outShape[axis] = along;
  return new NDArray(out as DTypeStorage[DType], outShape, first.dtype);
}

/** Cut `array` along `axis` into parts of `sizes[i]` (numpy.split at the running sums). */
export function splitAlong(array: NDArray, sizes: readonly number[], axis: number): NDArray[] {
  const shape = array.shape;
  const total = sizes.reduce((a, b) => a + b, 0);
  if (axis >= shape.length || shape[axis] !== total) {
    throw new BadInput(`Cannot split ${formatShape(shape)} into ${total} rows along dimension ${axis}`);
  }
  const outer = product(shape, 0, axis);
  const inner = product(shape, axis + 1, shape.length);
  const src = array.data as Flat;
  const parts: NDArray[] = [];
  let offset = 0;
  for (const size of sizes) {
    const block = size * inner;
    const data = allocate(array.dtype, outer * block) as Flat;
    for (let o = 0; o < outer; o++) copy(data, o * block, src, o * total * inner + offset * inner, block);
    const partShape = [...shape];
    partShape[axis] = size;
    parts.push(new NDArray(data as DTypeStorage[DType], partShape, array.dtype));
    offset += size;
  }
  return parts;
}
