import type { DType, DTypeStorage } from '../ndarray/dtype.js';
import { NDArray } from '../ndarray/ndarray.js';
import type { NamedTensors } from '../signature/named-tensors.js';

/** A tensor as it crosses a thread boundary (structured clone; typed-array buffers may be transferred). */
export interface WireTensor {
  name: string;
  dtype: DType;
  shape: number[];
  data: DTypeStorage[DType];
}

/**
 * Tensors for `postMessage`, plus the buffers that may move instead of being copied: a typed array that owns
 * its whole buffer. A view into a larger buffer (a pooled Buffer, a slice) is copied, so moving it cannot
 * detach memory that others still read.
 */
export function toWire(
  tensors: NamedTensors,
  transfer: boolean,
): { tensors: WireTensor[]; moved: ArrayBuffer[] } {
  const out: WireTensor[] = [];
  const moved: ArrayBuffer[] = [];
  for (const [name, array] of Object.entries(tensors)) {
    const data = array.data;
    if (
      transfer &&
      ArrayBuffer.isView(data) &&
      data.buffer instanceof ArrayBuffer &&
      data.byteOffset === 0 &&
      data.byteLength === data.buffer.byteLength &&
      !moved.includes(data.buffer)
    ) {
      moved.push(data.buffer);
    }
    out.push({ name, dtype: array.dtype, shape: [...array.shape], data });
  }
  return { tensors: out, moved };
}

export function fromWire(tensors: readonly WireTensor[]): NamedTensors {
  const out: NamedTensors = {};
  for (const t of tensors) out[t.name] = new NDArray(t.data, t.shape, t.dtype);
  return out;
}
