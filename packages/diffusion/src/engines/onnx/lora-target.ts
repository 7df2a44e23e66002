import type * as tf from '@tensorflow/tfjs';
import type { LoraFileModule, LoraTarget, WeightSnapshot } from '../../lora/types.js';
import type { WeightSpec } from '../../weights/weight-spec.js';
import type { GraphBranch, LoraInputs } from './lora-inputs.js';

class BranchSnapshot implements WeightSnapshot {
  constructor(readonly branches: readonly GraphBranch[] | undefined) {}
  dispose(): void {}
}

interface Component {
  inputs: LoraInputs;
  shapes: ReadonlyMap<string, readonly number[]>;
}

/**
 * The LoRA view of the onnxruntime engine (`unet.*`, `text_encoder.*` names, torch-layout shapes),
 * so `mergeLora` works unchanged: a merge adds the pair as a persistent low-rank branch (fed to
 * every run); a snapshot is the previous branch list, so unmerging restores the exact state.
 */
export class OnnxLoraTarget implements LoraTarget {
  readonly branchesOnHost = true;
  private readonly components = new Map<string, Component>();

  add(component: string, inputs: LoraInputs, specs: readonly WeightSpec[]): void {
    const shapes = new Map(specs.filter((s) => inputs.has(s.name)).map((s) => [s.name, s.shape] as const));
    this.components.set(component, { inputs, shapes });
  }

  *baseWeightNames(): Iterable<string> {
    for (const [component, c] of this.components)
      for (const name of c.shapes.keys()) yield `${component}.${name}`;
  }

  baseWeightShape(name: string): readonly number[] | undefined {
    const r = this.resolve(name);
    return r?.c.shapes.get(r.local);
  }

  addLowRank(name: string, module: LoraFileModule, factor: number): void {
    const { c, local } = this.require(name);
    const rank = module.down.shape[0];
    const branch = c.inputs.fromFile(local, module.down.data, module.up.data, rank, factor);
    c.inputs.setPersistent(local, [...(c.inputs.persistentBranches(local) ?? []), branch]);
  }

  addDelta(name: string, _delta: tf.Tensor, _scale: number): void {
    throw new Error(`${name}: the onnxruntime engine takes LoRA pairs (addLowRank), not dense deltas`);
  }

  snapshotWeight(name: string): WeightSnapshot {
    const { c, local } = this.require(name);
    return new BranchSnapshot(c.inputs.persistentBranches(local));
  }

  restoreWeight(name: string, snapshot: WeightSnapshot): void {
    const { c, local } = this.require(name);
    if (!(snapshot instanceof BranchSnapshot))
      throw new Error(`restoreWeight(${name}): not a snapshot of this pipeline`);
    c.inputs.setPersistent(local, snapshot.branches);
  }

  private resolve(name: string): { c: Component; local: string } | undefined {
    const dot = name.indexOf('.');
    const c = this.components.get(name.slice(0, dot));
    return c ? { c, local: name.slice(dot + 1) } : undefined;
  }

  private require(name: string): { c: Component; local: string } {
    const r = this.resolve(name);
    if (!r?.c.shapes.has(r.local)) throw new Error(`no base weight named ${name}`);
    return r;
  }
}
