import type { Context } from '../context/context.js';
import { BadInput } from '../errors/index.js';
import { NumpyNdarray } from '../io/descriptors/numpy-ndarray.js';
import { RaggedArrayError } from '../ndarray/convert.js';
import { formatShape } from '../ndarray/dtype.js';
import { NDArray } from '../ndarray/ndarray.js';
import type { NamedTensors } from '../signature/named-tensors.js';
import type { ModelSignature, TensorSpec } from '../signature/signature.js';
import { checkInputs, checkTensor } from '../signature/tensor-check.js';
import { tensorFromJson } from '../signature/tensor-from-json.js';
import type { ProtoPayload } from '../wire/proto/messages.js';
import type { Tensor, TensorMetadata } from '../wire/v2/tensor.js';
import { admitRun, type ModelRequest, type RequestLimits } from './run-admission.js';

/**
 * NumpyNdarray for one tensor of a model's signature (a model with one input and one output): the body is the
 * nested list, the dtype and shape come from the signature, and a mismatch is a 400 whose code names it
 * (`TENSOR_DTYPE_MISMATCH`, `TENSOR_RANK_MISMATCH`, `TENSOR_SHAPE_MISMATCH`), then the request is admitted to the
 * run (`admitRun`: no empty dimension the model cannot run, no answer its outputs make too large). The Open
 * Inference Protocol lists the tensor under its model name.
 */
export class SignatureNdarray extends NumpyNdarray {
  constructor(
    readonly model: string,
    readonly tensor: TensorSpec,
    /**
     * The served signature when this is the model's input, which is then checked; null for its output (the
     * model's own values are passed on as they are).
     */
    private readonly inputOf: ModelSignature | null,
  ) {
    super({ dtype: tensor.dtype, shape: tensor.shape });
    if (inputOf) {
      const shape = tensor.shape.map((n) => (n === -1 ? 1 : n));
      if (shape.reduce((a, b) => a * b, 1) <= 64) this.sample = NDArray.zeros(shape, tensor.dtype);
    }
  }

  /** The Open Inference Protocol lists the tensor under its name in the model. */
  override tensorMetadata(): TensorMetadata[] {
    return super.tensorMetadata(this.tensor.name);
  }

  override async fromHttpRequest(request: ModelRequest): Promise<NDArray> {
    return this.admitted(await super.fromHttpRequest(request), request.limits);
  }

  /** The model's input from protocol tensors: the one tensor must carry the input's name (else 400). */
  override async fromTensors(tensors: readonly Tensor[], ctx?: Context): Promise<NDArray> {
    if (!this.inputOf) return super.fromTensors(tensors);
    const given: NamedTensors = {};
    for (const t of tensors) given[t.name] = t.array;
    const input = checkInputs(this.model, [this.tensor], given)[this.tensor.name]!;
    return this.admitted(input, ctx?.request.limits);
  }

  override async fromProto(message: ProtoPayload | Uint8Array, limits?: RequestLimits): Promise<NDArray> {
    return this.admitted(await super.fromProto(message), limits);
  }

  private admitted(input: NDArray, limits: RequestLimits): NDArray {
    if (this.inputOf) admitRun(this.model, this.inputOf, { [this.tensor.name]: input }, limits);
    return input;
  }

  /** An integer input keeps a float literal a float, so the check refuses it instead of cutting it. */
  protected override arrayFromJson(parsed: unknown, what: string): NDArray {
    if (!this.inputOf) return super.arrayFromJson(parsed, what);
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
    if (!this.inputOf) return arr;
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
