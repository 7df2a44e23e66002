import * as tf from '@tensorflow/tfjs';
import type { LowRankBranch, LowRankBranchesByName } from '../ops/tfjs/low-rank.js';
import { resolveForApply } from './resolve.js';
import type { ApplyLoraOptions, LoraComponent, LoraFile, LoraTarget, ResolvedLoraModule } from './types.js';

/**
 * A LoRA prepared for the unfused (run-time) path: `y = W x + s · (alpha/r) · up(down(x))` computed
 * during the forward pass (docs/spec/diffusion.md §9.3), so the base weights are never written and any number of
 * requests, with different LoRAs or none, can share one pipeline. Holds its own tfjs tensors (about
 * the size of the LoRA file) until `dispose()`.
 */
export interface RuntimeLora {
  /** Base weight names with at least one branch (`unet.<P>.weight`, `text_encoder.<P>.weight`). */
  readonly weightNames: readonly string[];
  /** Modules skipped with `onUnmatched: 'skip'`. */
  readonly unmatched: readonly { key: string; reason: string }[];
  /** The request scale the branches were built with (one per LoRA of a combination). */
  readonly scales: readonly number[];
  /** Branches of one component keyed by its own weight names (what the models' forward takes). */
  component(name: LoraComponent): LowRankBranchesByName;
  /** Frees the branch tensors (idempotent); the LoRA cannot be used afterwards. */
  dispose(): void;
}

/**
 * Matches `file` against the target's base weights (same rules and errors as `mergeLora`) and
 * converts each pair to tfjs layout once: down `[in, r]` or `[kh, kw, in, r]`, up `[r, out]` with
 * `scale · alpha/r` folded in.
 */
export function prepareRuntimeLora(
  target: LoraTarget,
  file: LoraFile,
  options: ApplyLoraOptions = {},
): RuntimeLora {
  const { scale, modules, unmatched } = resolveForApply(file, target, options);
  const byComponent = new Map<string, Map<string, LowRankBranch[]>>();
  const owned: tf.Tensor[] = [];
  try {
    for (const m of modules) {
      const branch = toBranch(m, target.baseWeightShape(m.weightName) as readonly number[], scale);
      owned.push(branch.down, branch.up);
      const dot = m.weightName.indexOf('.');
      const component = m.weightName.slice(0, dot);
      const local = m.weightName.slice(dot + 1);
      const branches = byComponent.get(component) ?? new Map<string, LowRankBranch[]>();
      byComponent.set(component, branches);
      const list = branches.get(local);
      if (list) list.push(branch);
      else branches.set(local, [branch]);
    }
  } catch (e) {
    tf.dispose(owned);
    throw e;
  }
  let disposed = false;
  const empty: LowRankBranchesByName = new Map();
  return {
    weightNames: [...new Set(modules.map((m) => m.weightName))],
    unmatched,
    scales: [scale],
    component(name: LoraComponent): LowRankBranchesByName {
      if (disposed) throw new Error('this run-time LoRA was disposed');
      return byComponent.get(name) ?? empty;
    },
    dispose(): void {
      if (disposed) return;
      disposed = true;
      tf.dispose(owned);
      byComponent.clear();
    },
  };
}

/** One file pair in tfjs layout, shaped by the base weight it adapts (Linear rank 2, conv rank 4). */
function toBranch(m: ResolvedLoraModule, weightShape: readonly number[], scale: number): LowRankBranch {
  const { up, down } = m.module;
  const r = m.rank;
  const out = weightShape[0];
  const factor = scale * m.alphaScale;
  return tf.tidy(() => {
    const upT = tf.keep(tf.mul(tf.tensor2d(up.data, [out, r]).transpose([1, 0]), factor) as tf.Tensor2D);
    const downT =
      weightShape.length === 4
        ? tf.tensor4d(down.data, [r, weightShape[1], weightShape[2], weightShape[3]]).transpose([2, 3, 1, 0])
        : tf.tensor2d(down.data, [r, weightShape[1]]).transpose([1, 0]);
    return { down: tf.keep(downT), up: upT };
  });
}

/**
 * Several run-time LoRAs applied together: each weight's branches are the concatenation of theirs (the
 * forward pass sums them), so the combined output is `W x + Σ_i s_i · (alpha_i/r_i) · up_i(down_i(x))`.
 * Disposing the combination disposes every part.
 */
export function combineRuntimeLoras(loras: readonly RuntimeLora[]): RuntimeLora {
  if (loras.length === 1) return loras[0];
  const cache = new Map<LoraComponent, LowRankBranchesByName>();
  return {
    weightNames: [...new Set(loras.flatMap((l) => l.weightNames))],
    unmatched: loras.flatMap((l) => l.unmatched),
    scales: loras.flatMap((l) => l.scales),
    component(name: LoraComponent): LowRankBranchesByName {
      let merged = cache.get(name);
      if (!merged) {
        const out = new Map<string, LowRankBranch[]>();
        for (const lora of loras)
          for (const [weight, branches] of lora.component(name))
            out.set(weight, [...(out.get(weight) ?? []), ...branches]);
        merged = out;
        cache.set(name, merged);
      }
      return merged;
    },
    dispose(): void {
      for (const lora of loras) lora.dispose();
      cache.clear();
    },
  };
}
