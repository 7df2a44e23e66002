import type { NamedTensors } from './named-tensors.js';
import type { ModelSignature, TensorSpec } from './signature.js';

/**
 * The size of an output dimension the inputs already decide, or undefined: the batch dimension of a batchable
 * signature is the inputs' rows (batching splits outputs by them), and a symbolic dimension that shares its
 * name with an input's is that input's size there (ONNX: a `dim_param` names the same value across the whole
 * graph, onnx/docs/IR.md "Static tensor shapes").
 */
function knownSize(
  signature: ModelSignature,
  output: TensorSpec,
  dim: number,
  given: NamedTensors,
): number | undefined {
  let rows: number | undefined;
  if (signature.batchable && dim === signature.batch_dim) {
    for (const spec of signature.inputs) {
      const n = given[spec.name]?.shape[dim];
      if (n !== undefined) rows = rows === undefined ? n : Math.min(rows, n);
    }
    if (rows !== undefined) return rows;
  }
  const name = output.dimNames?.[dim];
  if (!name) return undefined;
  for (const spec of signature.inputs) {
    const at = spec.dimNames?.indexOf(name) ?? -1;
    const n = at === -1 ? undefined : given[spec.name]?.shape[at];
    if (n !== undefined) return n;
  }
  return undefined;
}

/**
 * The values the model's answer to `given` holds at least, from its declared output shapes: fixed sizes, and
 * dynamic ones the inputs decide (`knownSize`). An output with a dimension nothing decides counts 0 (it may be
 * empty); its size is counted after the run, as every answer's is. Lets a request whose answer is bound to be
 * too large be refused before the model runs it.
 */
export function declaredAnswerElements(signature: ModelSignature, given: NamedTensors): number {
  let total = 0;
  for (const output of signature.outputs) {
    let count = 1;
    for (let dim = 0; dim < output.shape.length && count > 0; dim++) {
      const declared = output.shape[dim]!;
      count *= declared >= 0 ? declared : (knownSize(signature, output, dim, given) ?? 0);
    }
    total += count;
  }
  return total;
}
