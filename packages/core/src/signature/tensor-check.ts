import { BadInput } from '../errors/index.js';
import { canCastSameKind, type DType, dtypeKind, formatShape, shapesMatch } from '../ndarray/dtype.js';
import type { NDArray } from '../ndarray/ndarray.js';
import type { NamedTensors } from './named-tensors.js';
import { describeTensor, type TensorSpec } from './signature.js';

/** The signature's side in an error's `detail`, so a client can see what the model expects. */
function expected(specs: readonly TensorSpec[]) {
  return { expected: specs.map((t) => ({ name: t.name, dtype: t.dtype, shape: [...t.shape] })) };
}

function listing(specs: readonly TensorSpec[]): string {
  return specs.map(describeTensor).join(', ');
}

/** A value's dtype may become the model's when the cast keeps the kind of value (int → float, not float → int). */
function castable(from: DType, to: DType): boolean {
  const kind = dtypeKind(to);
  return kind !== 'U' && kind !== 'O' && dtypeKind(from) !== 'U' && canCastSameKind(from, to);
}

/** One input tensor against its spec: cast to the model's dtype when that keeps the kind, else 400. */
export function checkTensor(
  model: string,
  spec: TensorSpec,
  array: NDArray,
  inputs: readonly TensorSpec[],
): NDArray {
  let out = array;
  if (out.dtype !== spec.dtype) {
    if (!castable(out.dtype, spec.dtype)) {
      throw new BadInput(
        `Model '${model}' input '${spec.name}' takes ${spec.dtype}, got ${out.dtype} (expected ${listing(inputs)})`,
        { code: 'TENSOR_DTYPE_MISMATCH', detail: expected(inputs) },
      );
    }
    out = out.astype(spec.dtype);
  }
  // Most clients cannot write a rank-0 tensor (a JSON scalar, a v2 shape []): exactly one element is taken
  // for a scalar input, as onnxruntime itself takes it.
  if (spec.shape.length === 0 && out.shape.length > 0 && out.size === 1) out = out.reshape([]);
  if (!shapesMatch(spec.shape, out.shape)) {
    const rank = spec.shape.length !== out.shape.length;
    throw new BadInput(
      `Model '${model}' input '${spec.name}' takes shape ${formatShape(spec.shape)}, got ${formatShape(out.shape)}${rank ? ` (rank ${spec.shape.length}, got ${out.shape.length})` : ''} (expected ${listing(inputs)})`,
      { code: rank ? 'TENSOR_RANK_MISMATCH' : 'TENSOR_SHAPE_MISMATCH', detail: expected(inputs) },
    );
  }
  return out;
}

/**
 * The given tensors' names against the model's inputs: a name the model has no input for, or an input not given,
 * is the caller's mistake, a 400 naming the model's inputs (what `model.run()` checks before the runtime sees them).
 */
export function checkInputNames(model: string, inputs: readonly TensorSpec[], given: NamedTensors): void {
  const names = new Set(inputs.map((t) => t.name));
  const unknown = Object.keys(given).filter((n) => !names.has(n));
  if (unknown.length > 0) {
    throw new BadInput(
      `Model '${model}' has no input named ${unknown.map((n) => `'${n}'`).join(', ')} (expected ${listing(inputs)})`,
      { code: 'UNKNOWN_TENSOR', detail: expected(inputs) },
    );
  }
  const missing = inputs.filter((t) => !Object.hasOwn(given, t.name));
  if (missing.length > 0) {
    throw new BadInput(
      `Model '${model}' is missing input ${missing.map((t) => `'${t.name}'`).join(', ')} (expected ${listing(inputs)})`,
      { code: 'MISSING_TENSOR', detail: expected(inputs) },
    );
  }
}

/**
 * The request's tensors against the model's inputs: every input present, none unknown, dtypes castable and
 * shapes matching (-1 takes any size). Returns the tensors cast to the model's dtypes. Each refusal is a 400
 * whose code says what is wrong and whose detail lists the expected inputs.
 */
export function checkInputs(model: string, inputs: readonly TensorSpec[], given: NamedTensors): NamedTensors {
  checkInputNames(model, inputs, given);
  const out: NamedTensors = {};
  for (const spec of inputs) out[spec.name] = checkTensor(model, spec, given[spec.name]!, inputs);
  return out;
}
