import { BadInput } from '../errors/index.js';
import { formatShape } from '../ndarray/dtype.js';
import type { NamedTensors } from './named-tensors.js';
import type { ModelSignature } from './signature.js';

/**
 * The one dimension along which a model's inputs may hold nothing, or null: the batch dimension of a batchable
 * signature (an empty batch runs: ONNX Runtime's kernels take N = 0, "only N can be zero"). Any other dimension
 * of size 0, fixed or dynamic, is one the model has no way to run (a convolution of width 0 fails in the
 * runtime), so it is refused before the run.
 */
export function emptyDimension(signature: ModelSignature): number | null {
  return signature.batchable ? signature.batch_dim : null;
}

/**
 * Each given input against the model's rule for empty dimensions (`emptyDimension`): a size-0 dimension
 * elsewhere is a 400 `TENSOR_EMPTY_DIMENSION` naming the input and the dimension. Runs after the shape check
 * (`checkInputs`), so a fixed dimension given as 0 is already a `TENSOR_SHAPE_MISMATCH`.
 */
export function checkEmptyDimensions(model: string, signature: ModelSignature, given: NamedTensors): void {
  const allowed = emptyDimension(signature);
  for (const spec of signature.inputs) {
    const shape = given[spec.name]?.shape;
    if (!shape) continue;
    const at = shape.findIndex((n, dim) => n === 0 && dim !== allowed);
    if (at === -1) continue;
    const rule =
      allowed === null
        ? 'it runs no input with a dimension of size 0'
        : `only its batch dimension ${allowed} may be 0 (an empty batch)`;
    throw new BadInput(
      `Model '${model}' input '${spec.name}' has size 0 in dimension ${at} (shape ${formatShape(shape)}): ${rule}`,
      {
        code: 'TENSOR_EMPTY_DIMENSION',
        detail: {
          expected: signature.inputs.map((t) => ({ name: t.name, dtype: t.dtype, shape: [...t.shape] })),
        },
      },
    );
  }
}
