import * as tf from '@tensorflow/tfjs';
import type { LoraTarget, WeightSnapshot } from '../lora/types.js';
import type { WeightStore } from '../weights/store.js';

class TensorSnapshot implements WeightSnapshot {
  constructor(readonly tensor: tf.Tensor) {}
  dispose(): void {
    this.tensor.dispose();
  }
}

/**
 * The LoRA view of a pipeline's weights: names `<component>.<diffusers name>`, torch-layout
 * shapes; deltas are converted to the store's tfjs layout.
 */
export class PipelineWeightTarget implements LoraTarget {
  private readonly stores: ReadonlyMap<string, WeightStore>;

  constructor(stores: Record<string, WeightStore>) {
    this.stores = new Map(Object.entries(stores));
  }

  *baseWeightNames(): Iterable<string> {
    for (const [component, store] of this.stores)
      for (const s of store.specList()) yield `${component}.${s.name}`;
  }

  baseWeightShape(name: string): readonly number[] | undefined {
    const r = this.resolve(name);
    return r?.store.has(r.local) ? r.store.spec(r.local).shape : undefined;
  }

  addDelta(name: string, delta: tf.Tensor, scale: number): void {
    const { store, local } = this.require(name);
    store.addDelta(local, delta, scale);
  }

  snapshotWeight(name: string): WeightSnapshot {
    const { store, local } = this.require(name);
    return new TensorSnapshot(tf.keep(tf.clone(store.get(local))));
  }

  restoreWeight(name: string, snapshot: WeightSnapshot): void {
    const { store, local } = this.require(name);
    if (!(snapshot instanceof TensorSnapshot))
      throw new Error(`restoreWeight(${name}): not a snapshot of this pipeline`);
    store.replace(local, tf.keep(tf.clone(snapshot.tensor)));
  }

  private resolve(name: string): { store: WeightStore; local: string } | undefined {
    const dot = name.indexOf('.');
    const store = this.stores.get(name.slice(0, dot));
    return store ? { store, local: name.slice(dot + 1) } : undefined;
  }

  private require(name: string): { store: WeightStore; local: string } {
    const r = this.resolve(name);
    if (!r?.store.has(r.local)) throw new Error(`no base weight named ${name}`);
    return r;
  }
}
