import type * as tf from '@tensorflow/tfjs';
import { type HostTensor, transpose } from '../latents/host-tensor.js';
import { toTf } from '../latents/tfjs-interop.js';
import { resolveForApply } from './resolve.js';
import type {
  ApplyLoraOptions,
  LoraComponent,
  LoraFile,
  LoraTarget,
  LowRankBranch,
  LowRankBranchesByName,
  ResolvedLoraModule,
} from './types.js';

/** One low-rank pair on the host, in the layout of {@link LowRankBranch}, `scale · alpha/r` folded into `up`. */
export interface HostLowRankBranch {
  /** Linear: `[in, r]`; conv: `[kh, kw, in, r]`. */
  readonly down: HostTensor;
  /** `[r, out]`. */
  readonly up: HostTensor;
}

/** Host branches per base weight name of one component. */
export type HostBranchesByName = ReadonlyMap<string, readonly HostLowRankBranch[]>;

/**
 * A LoRA prepared for the unfused (run-time) path: `y = W x + s · (alpha/r) · up(down(x))` computed
 * during the forward pass (docs/spec/diffusion.md §9.3), so the base weights are never written and any number of
 * requests, with different LoRAs or none, can share one pipeline. Holds its branches on the host, and for a TF.js
 * target also as TF.js tensors (about the size of the LoRA file), until `dispose()`.
 */
export interface RuntimeLora {
  /** Base weight names with at least one branch (`unet.<P>.weight`, `text_encoder.<P>.weight`). */
  readonly weightNames: readonly string[];
  /** Modules skipped with `onUnmatched: 'skip'`. */
  readonly unmatched: readonly { key: string; reason: string }[];
  /** The request scale the branches were built with (one per LoRA of a combination). */
  readonly scales: readonly number[];
  /** Branches of one component keyed by its own weight names, as TF.js tensors (the TF.js models' forward). */
  component(name: LoraComponent): LowRankBranchesByName;
  /** The same branches as host arrays (what the onnxruntime engine feeds its sessions). */
  hostComponent(name: LoraComponent): HostBranchesByName;
  /** Frees the branch tensors (idempotent); the LoRA cannot be used afterwards. */
  dispose(): void;
}

/**
 * Matches `file` against the target's base weights (same rules and errors as `mergeLora`) and
 * converts each pair to tfjs layout once: down `[in, r]` or `[kh, kw, in, r]`, up `[r, out]` with
 * `scale · alpha/r` folded in. TF.js tensors are made only for a target whose weights are TF.js tensors (not for
 * one with `branchesOnHost`), and then at once.
 */
export function prepareRuntimeLora(
  target: LoraTarget,
  file: LoraFile,
  options: ApplyLoraOptions = {},
): RuntimeLora {
  const { scale, modules, unmatched } = resolveForApply(file, target, options);
  const host = new Map<string, Map<string, HostLowRankBranch[]>>();
  for (const m of modules) {
    const branch = hostBranch(m, target.baseWeightShape(m.weightName) as readonly number[], scale);
    const dot = m.weightName.indexOf('.');
    const component = m.weightName.slice(0, dot);
    const local = m.weightName.slice(dot + 1);
    const branches = host.get(component) ?? new Map<string, HostLowRankBranch[]>();
    host.set(component, branches);
    const list = branches.get(local);
    if (list) list.push(branch);
    else branches.set(local, [branch]);
  }
  const owned: tf.Tensor[] = [];
  let onTf: Map<string, LowRankBranchesByName> | null = null;
  const tfBranches = (): Map<string, LowRankBranchesByName> => {
    if (!onTf) {
      const made = new Map<string, LowRankBranchesByName>();
      try {
        for (const [component, branches] of host) {
          const byName = new Map<string, LowRankBranch[]>();
          for (const [local, list] of branches)
            byName.set(
              local,
              list.map((b) => {
                const down = toTf(b.down);
                owned.push(down);
                const up = toTf<tf.Rank.R2>(b.up);
                owned.push(up);
                return { down, up };
              }),
            );
          made.set(component, byName);
        }
      } catch (e) {
        for (const t of owned.splice(0)) t.dispose();
        throw e;
      }
      onTf = made;
    }
    return onTf;
  };
  if (!target.branchesOnHost) tfBranches();
  let disposed = false;
  const empty = new Map();
  const live = (): void => {
    if (disposed) throw new Error('this run-time LoRA was disposed');
  };
  return {
    weightNames: [...new Set(modules.map((m) => m.weightName))],
    unmatched,
    scales: [scale],
    component(name: LoraComponent): LowRankBranchesByName {
      live();
      return tfBranches().get(name) ?? empty;
    },
    hostComponent(name: LoraComponent): HostBranchesByName {
      live();
      return host.get(name) ?? empty;
    },
    dispose(): void {
      if (disposed) return;
      disposed = true;
      for (const t of owned.splice(0)) t.dispose();
      host.clear();
      onTf?.clear();
    },
  };
}

/**
 * One file pair in tfjs layout, shaped by the base weight it adapts (Linear rank 2, conv rank 4); the factor is
 * multiplied in float32 (as a TF.js scalar is).
 */
function hostBranch(m: ResolvedLoraModule, weightShape: readonly number[], scale: number): HostLowRankBranch {
  const { up, down } = m.module;
  const r = m.rank;
  const out = weightShape[0];
  const factor = Math.fround(scale * m.alphaScale);
  const scaledUp = Float32Array.from(up.data, (v) => v * factor);
  const upT = transpose({ data: scaledUp, shape: [out, r] }, [1, 0]);
  const downT =
    weightShape.length === 4
      ? transpose(
          { data: down.data, shape: [r, weightShape[1], weightShape[2], weightShape[3]] },
          [2, 3, 1, 0],
        )
      : transpose({ data: down.data, shape: [r, weightShape[1]] }, [1, 0]);
  return { down: downT, up: upT };
}

/**
 * Several run-time LoRAs applied together: each weight's branches are the concatenation of theirs (the
 * forward pass sums them), so the combined output is `W x + Σ_i s_i · (alpha_i/r_i) · up_i(down_i(x))`.
 * Disposing the combination disposes every part.
 */
export function combineRuntimeLoras(loras: readonly RuntimeLora[]): RuntimeLora {
  if (loras.length === 1) return loras[0];
  const cache = new Map<LoraComponent, LowRankBranchesByName>();
  const hostCache = new Map<LoraComponent, HostBranchesByName>();
  /** One component's branches of every LoRA, per weight, made once per component. */
  const joined = <B>(
    store: Map<LoraComponent, ReadonlyMap<string, readonly B[]>>,
    name: LoraComponent,
    of: (lora: RuntimeLora) => ReadonlyMap<string, readonly B[]>,
  ): ReadonlyMap<string, readonly B[]> => {
    let merged = store.get(name);
    if (!merged) {
      const out = new Map<string, B[]>();
      for (const lora of loras)
        for (const [weight, branches] of of(lora)) out.set(weight, [...(out.get(weight) ?? []), ...branches]);
      merged = out;
      store.set(name, merged);
    }
    return merged;
  };
  return {
    weightNames: [...new Set(loras.flatMap((l) => l.weightNames))],
    unmatched: loras.flatMap((l) => l.unmatched),
    scales: loras.flatMap((l) => l.scales),
    component(name: LoraComponent): LowRankBranchesByName {
      return joined(cache, name, (lora) => lora.component(name));
    },
    hostComponent(name: LoraComponent): HostBranchesByName {
      return joined(hostCache, name, (lora) => lora.hostComponent(name));
    },
    dispose(): void {
      for (const lora of loras) lora.dispose();
      cache.clear();
      hostCache.clear();
    },
  };
}
