import type { Context } from '../context/context.js';
import { BadInput } from '../errors/index.js';
import { NumpyNdarray } from '../io/descriptors/numpy-ndarray.js';
import { RaggedArrayError } from '../ndarray/convert.js';
import { formatShape } from '../ndarray/dtype.js';
import { NDArray } from '../ndarray/ndarray.js';
import type { NamedTensors } from '../signature/named-tensors.js';
import type { TensorSpec } from '../signature/signature.js';
import { checkInputs, checkTensor } from '../signature/tensor-check.js';
import { tensorFromJson } from '../signature/tensor-from-json.js';
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

  /** The model's input from protocol tensors: the one tensor must carry the input's name (else 400). */
  override async fromTensors(tensors: readonly Tensor[]): Promise<NDArray> {
    if (!this.checksInput) return super.fromTensors(tensors);
    const given: NamedTensors = {};
    for (const t of tensors) given[t.name] = t.array;
    return checkInputs(this.model, [this.tensor], given)[this.tensor.name]!;
  }

  /** An integer input keeps a float literal a float, so the check refuses it instead of cutting it. */
  protected override arrayFromJson(parsed: unknown, what: string): NDArray {
    if (!this.checksInput) return super.arrayFromJson(parsed, what);
    try {
      return tensorFromJson(parsed, this.tensor);
    } catch (err) {
      if (err instanceof RaggedArrayError) throw new BadInput(`${what}: ${err.message}`);
      throw err;
    }
  }

  override toTensors(value: NDArray, ctx: Context): Promise<Tensor[]> {
    return super.toTensors(value, ctx, this.tensor.name);
  }

  override validate(arr: NDArray): NDArray {
    if (!this.checksInput) return arr;
    // A JSON object (`{"measurements": [[…]]}`, the named form of models with several inputs) parses to one
    // object value: say which forms this API takes instead of "got object".
    if (arr.dtype === 'object' && arr.shape.length === 0) {
      const { name, dtype, shape } = this.tensor;
      throw new BadInput(
        `Model '${this.model}' takes its input '${name}' (${dtype} ${formatShape(shape)}) as the body itself, a nested list such as ${JSON.stringify(this.exampleRows())}, not a JSON object (named tensors are the Open Inference Protocol's form, under /v2)`,
        { code: 'TENSOR_DTYPE_MISMATCH', detail: { expected: [{ name, dtype, shape: [...shape] }] } },
      );
    }
    return checkTensor(this.model, this.tensor, arr, [this.tensor]);
  }

  /** One row of zeros in the input's shape (free sizes 1), for messages. */
  private exampleRows(): unknown {
    const build = (dims: readonly number[]): unknown =>
      dims.length === 0
        ? 0
        : Array.from({ length: Math.min(dims[0] === -1 ? 1 : dims[0]!, 4) }, () => build(dims.slice(1)));
    return build(this.tensor.shape);
  }
}
