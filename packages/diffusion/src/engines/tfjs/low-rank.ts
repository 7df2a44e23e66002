import * as tf from '@tensorflow/tfjs';
import type { LowRankBranch, LowRankBranchesByName } from '../../lora/types.js';

/** Branches per base weight tensor of one model, for one forward call. */
export type LowRankBranches = ReadonlyMap<tf.Tensor, readonly LowRankBranch[]>;

let active: LowRankBranches | null = null;

/**
 * Runs a synchronous forward pass with `branches` visible to `linear` / `conv2d`. The branches are
 * keyed by the base weight tensor, so the model code stays unchanged; a forward pass never awaits,
 * so concurrent requests (interleaving only between steps) never see each other's branches.
 */
export function withLowRankBranches<T>(branches: LowRankBranches | null, forward: () => T): T {
  const previous = active;
  active = branches && branches.size > 0 ? branches : null;
  try {
    return forward();
  } finally {
    active = previous;
  }
}

/** The branches for a base weight in the current forward pass, if any. */
export function lowRankBranchesFor(weight: tf.Tensor): readonly LowRankBranch[] | undefined {
  return active?.get(weight);
}

/** Name-keyed branches → tensor-keyed ones, resolving names through the model's weight lookup. */
export function branchesByTensor(
  byName: LowRankBranchesByName | undefined,
  weight: (name: string) => tf.Tensor,
): LowRankBranches | null {
  if (!byName || byName.size === 0) return null;
  const out = new Map<tf.Tensor, readonly LowRankBranch[]>();
  for (const [name, branches] of byName) out.set(weight(name), branches);
  return out;
}

/** `(x·down)·up` summed over branches for a Linear input `[..., in]` → `[..., out]` (caller tidies). */
export function linearBranches(x2d: tf.Tensor2D, branches: readonly LowRankBranch[]): tf.Tensor2D {
  let sum: tf.Tensor2D | null = null;
  for (const b of branches) {
    const y = tf.matMul(tf.matMul(x2d, b.down as tf.Tensor2D), b.up) as tf.Tensor2D;
    sum = sum ? (tf.add(sum, y) as tf.Tensor2D) : y;
  }
  return sum as tf.Tensor2D;
}

/** 1×1 `up` over the channels of an NHWC `[B, H, W, r]` tensor → `[B, H, W, out]` (caller tidies). */
export function upChannels(h: tf.Tensor4D, up: tf.Tensor2D): tf.Tensor4D {
  const [b, height, width, r] = h.shape;
  return tf.matMul(h.reshape([-1, r]) as tf.Tensor2D, up).reshape([b, height, width, up.shape[1]]);
}
