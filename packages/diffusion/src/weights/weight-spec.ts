/** What an architecture declares about each weight (no tensors: both engines read these). */

/**
 * How a torch-layout weight is held in tfjs layout:
 * - `linear`: [out, in] → [in, out] (so `x @ W` needs no transpose per call)
 * - `conv`: [O, I, kh, kw] → [kh, kw, I, O] (tf.conv2d filter layout)
 * - `plain`: unchanged (norm vectors, biases, embeddings)
 */
export type WeightKind = 'linear' | 'conv' | 'plain';

export interface WeightSpec {
  /** diffusers/transformers name inside the component file. */
  readonly name: string;
  /** torch (file) shape. */
  readonly shape: readonly number[];
  readonly kind: WeightKind;
}

export class WeightShapeError extends Error {
  override readonly name = 'WeightShapeError';
}

/**
 * A file's shape for `spec`, checked against the declaration (both engines load through this): legacy VAE
 * attention weights converted from LDM checkpoints are [C, C, 1, 1] 1×1 convs and count as the Linear [C, C].
 */
export function checkedShape(
  component: string,
  spec: WeightSpec,
  fileShape: readonly number[],
): readonly number[] {
  let shape = fileShape;
  if (spec.kind === 'linear' && shape.length === 4 && shape[2] === 1 && shape[3] === 1)
    shape = shape.slice(0, 2);
  if (shape.length !== spec.shape.length || shape.some((d, i) => d !== spec.shape[i]))
    throw new WeightShapeError(
      `${component}: weight ${spec.name} has shape [${fileShape.join(', ')}], expected [${spec.shape.join(', ')}]`,
    );
  return shape;
}
