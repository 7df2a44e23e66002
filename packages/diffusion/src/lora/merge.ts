import { loraDelta } from './delta.js';
import { resolveForApply } from './resolve.js';
import type {
  AppliedLora,
  ApplyLoraOptions,
  LoraFile,
  LoraTarget,
  ResolvedLoraModule,
  WeightSnapshot,
} from './types.js';

/**
 * Merges a LoRA into the target's weights: `W ← W + scale · alpha/r · up @ down` (docs/spec/diffusion.md §9.3).
 * Returns a handle whose `unmerge()` restores the previous weights: bit-exactly from snapshots when
 * the target offers them, otherwise by subtracting the same delta (float32 rounding, ~1e-8).
 * A failure part-way restores what was already merged before rethrowing.
 */
export function mergeLora(target: LoraTarget, file: LoraFile, options: ApplyLoraOptions = {}): AppliedLora {
  const { scale, modules, unmatched } = resolveForApply(file, target, options);
  const exact = typeof target.snapshotWeight === 'function' && typeof target.restoreWeight === 'function';
  const snapshots = new Map<string, WeightSnapshot>();
  const applied: ResolvedLoraModule[] = [];

  const restore = (): void => {
    if (exact) {
      for (const [name, snap] of snapshots) {
        target.restoreWeight?.(name, snap);
        snap.dispose();
      }
      snapshots.clear();
    } else {
      // Reverse order so overlapping modules on one weight undo in LIFO order.
      for (const m of applied.reverse()) addScaled(target, m, -scale * m.alphaScale);
    }
    applied.length = 0;
  };

  try {
    for (const m of modules) {
      if (exact && !snapshots.has(m.weightName)) {
        snapshots.set(m.weightName, (target.snapshotWeight as (n: string) => WeightSnapshot)(m.weightName));
      }
      addScaled(target, m, scale * m.alphaScale);
      applied.push(m);
    }
  } catch (e) {
    restore();
    throw e;
  }

  let merged = true;
  return {
    weightNames: [...new Set(modules.map((m) => m.weightName))],
    unmatched,
    exactRestore: exact,
    unmerge(): void {
      if (!merged) return;
      merged = false;
      restore();
    },
  };
}

function addScaled(target: LoraTarget, m: ResolvedLoraModule, factor: number): void {
  if (target.addLowRank) {
    target.addLowRank(m.weightName, m.module, factor);
    return;
  }
  const shape = target.baseWeightShape(m.weightName) as readonly number[];
  const delta = loraDelta(m, shape);
  try {
    target.addDelta(m.weightName, delta, factor);
  } finally {
    delta.dispose();
  }
}
