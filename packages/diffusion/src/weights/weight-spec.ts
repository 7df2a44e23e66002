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
