import type { Context } from '../context/context.js';
import { NumpyNdarray } from '../io/descriptors/numpy-ndarray.js';
import { NDArray } from '../ndarray/ndarray.js';
import type { TensorSpec } from '../signature/signature.js';
import { checkTensor } from '../signature/tensor-check.js';
import type { Tensor, TensorMetadata } from '../wire/v2/tensor.js';

/**
 * NumpyNdarray for one tensor of a model's signature (a model with one input and one output): the body is the
 * nested list, the dtype and shape come from the signature, and a mismatch is a 400 whose code names it
 * (`TENSOR_DTYPE_MISMATCH`, `TENSOR_RANK_MISMATCH`, `TENSOR_SHAPE_MISMATCH`). The Open Inference Protocol lists
 * the tensor under its model name.
 */
export class SignatureNdarray extends NumpyNdarray {
  constructor(
    readonly model: string,
    readonly tensor: TensorSpec,
    /** Checks input (false for an output: the model's own values are passed on as they are). */
    private readonly checksInput: boolean,
  ) {
    super({ dtype: tensor.dtype, shape: tensor.shape });
    if (checksInput) {
      const shape = tensor.shape.map((n) => (n === -1 ? 1 : n));
      if (shape.reduce((a, b) => a * b, 1) <= 64) this.sample = NDArray.zeros(shape, tensor.dtype);
    }
  }

  /** The Open Inference Protocol lists the tensor under its name in the model. */
  override tensorMetadata(): TensorMetadata[] {
    return super.tensorMetadata(this.tensor.name);
  }

  override toTensors(value: NDArray, ctx: Context): Promise<Tensor[]> {
    return super.toTensors(value, ctx, this.tensor.name);
  }

  override validate(arr: NDArray): NDArray {
    return this.checksInput ? checkTensor(this.model, this.tensor, arr, [this.tensor]) : arr;
  }
}
