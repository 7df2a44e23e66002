import { type DType, fromHalfBits, NDArray, toHalfBits } from '@tiffin/core/internal';
import type { Tensor } from 'onnxruntime-node';
import type { OrtModule } from './providers.js';

/** ONNX Runtime's tensor type names → NDArray dtypes (the ones both sides can hold). */
const FROM_ORT: Readonly<Record<string, DType>> = {
  float32: 'float32',
  float64: 'float64',
  float16: 'float16',
  int8: 'int8',
  int16: 'int16',
  int32: 'int32',
  int64: 'int64',
  uint8: 'uint8',
  uint16: 'uint16',
  uint32: 'uint32',
  uint64: 'uint64',
  bool: 'bool',
  string: 'str',
};

/** The NDArray dtype of an ORT tensor type, or null when NDArray has none (bfloat16, int4, float8...). */
export function dtypeOfOrtType(type: string): DType | null {
  return FROM_ORT[type] ?? null;
}

function ortTypeOf(dtype: DType): Tensor.Type {
  if (dtype === 'str') return 'string';
  return dtype as Tensor.Type;
}

/**
 * An NDArray as an ORT tensor. The typed array is handed over as it is (no copy), except float16: NDArray keeps
 * half floats as rounded float32 values, ORT wants their 16-bit patterns.
 */
export function toOrtTensor(ort: OrtModule, array: NDArray): Tensor {
  const dims = [...array.shape];
  if (array.dtype === 'float16') {
    const src = array.data as Float32Array;
    const bits = new Uint16Array(src.length);
    for (let i = 0; i < src.length; i++) bits[i] = toHalfBits(src[i]!);
    return new ort.Tensor('float16', bits, dims);
  }
  return new ort.Tensor(ortTypeOf(array.dtype), array.data as never, dims);
}

/** An ORT output tensor as an NDArray over the same memory (float16 decoded into float32 values). */
export function fromOrtTensor(tensor: Tensor): NDArray {
  const dtype = dtypeOfOrtType(tensor.type);
  if (!dtype) throw new Error(`ONNX Runtime returned a ${tensor.type} tensor, which NDArray cannot hold`);
  const dims = tensor.dims.map(Number);
  if (dtype === 'float16') {
    const bits = tensor.data as Uint16Array;
    const out = new Float32Array(bits.length);
    for (let i = 0; i < bits.length; i++) out[i] = fromHalfBits(bits[i]!);
    return new NDArray(out, dims, 'float16');
  }
  return new NDArray(tensor.data as never, dims, dtype);
}
