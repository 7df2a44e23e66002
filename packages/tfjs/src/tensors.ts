import * as tf from '@tensorflow/tfjs';
import { type DType, InvalidArgument, NDArray } from '@tiffin/core/internal';

/** TensorFlow.js dtypes → NDArray dtypes (complex64 has no NDArray counterpart). */
const FROM_TF: Readonly<Record<string, DType>> = {
  float32: 'float32',
  int32: 'int32',
  bool: 'bool',
  string: 'str',
};

/** The NDArray dtype of a tfjs dtype, or null when NDArray has none. */
export function dtypeOfTf(dtype: string | undefined): DType | null {
  return dtype === undefined ? null : (FROM_TF[dtype] ?? null);
}

/**
 * An NDArray as a tfjs tensor. float32 and int32 storage is handed over as it is (tfjs copies it into its
 * backend); bool becomes tfjs's bool; strings are decoded by tfjs. Other dtypes are refused: the request check
 * has already matched them against the signature, which only names tfjs's dtypes.
 */
export function toTfTensor(array: NDArray): tf.Tensor {
  const shape = [...array.shape];
  switch (array.dtype) {
    case 'float32':
      return tf.tensor(array.data as Float32Array, shape, 'float32');
    case 'int32':
      return tf.tensor(array.data as Int32Array, shape, 'int32');
    case 'bool':
      return tf.tensor(array.data as Uint8Array, shape, 'bool');
    case 'str':
      return tf.tensor(array.data as string[], shape, 'string');
    default:
      throw new InvalidArgument(
        `TensorFlow.js models take float32, int32, bool or string tensors, not ${array.dtype}`,
      );
  }
}

/** A tfjs tensor's values as an NDArray (the tensor is left for the caller to dispose). */
export async function fromTfTensor(tensor: tf.Tensor): Promise<NDArray> {
  const dtype = dtypeOfTf(tensor.dtype);
  if (!dtype) throw new Error(`TensorFlow.js returned a ${tensor.dtype} tensor, which NDArray cannot hold`);
  const shape = [...tensor.shape];
  if (dtype === 'str') {
    const bytes = (await tensor.data()) as unknown as Uint8Array[];
    return new NDArray(
      bytes.map((b) => Buffer.from(b).toString('utf8')),
      shape,
      'str',
    );
  }
  const data = await tensor.data();
  // tfjs keeps bool as Uint8Array, float32 as Float32Array, int32 as Int32Array: NDArray's storage for each.
  return new NDArray(data as never, shape, dtype);
}
