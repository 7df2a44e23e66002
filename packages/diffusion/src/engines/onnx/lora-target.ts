import * as tf from '@tensorflow/tfjs';
import type { LoraTarget, WeightSnapshot } from '../../lora/types.js';
import type { WeightSpec } from '../../weights/store.js';
import type { WeightOverrides } from './weight-overrides.js';

class FusedSnapshot implements WeightSnapshot {
  constructor(readonly value: Float32Array | undefined) {}
  dispose(): void {}
}

interface Component {
  overrides: WeightOverrides;
  shapes: ReadonlyMap<string, readonly number[]>;
}

/**
 * The LoRA view of the onnxruntime engine (`unet.*`, `text_encoder.*` names, torch-layout
 * shapes), so `mergeLora` / `prepareRuntimeLora` work unchanged. A merge becomes a fused
 * replacement fed to every run; a snapshot is the previous replacement (or none), so unmerging
 * restores the stored weights bit-exactly.
 */
export class OnnxLoraTarget implements LoraTarget {
  private readonly components = new Map<string, Component>();

  add(component: string, overrides: WeightOverrides, specs: readonly WeightSpec[]): void {
    const shapes = new Map(specs.filter((s) => overrides.has(s.name)).map((s) => [s.name, s.shape] as const));
    this.components.set(component, { overrides, shapes });
  }

  *baseWeightNames(): Iterable<string> {
    for (const [component, c] of this.components) for (const name of c.shapes.keys()) yield `${component}.${name}`;
  }

  baseWeightShape(name: string): readonly number[] | undefined {
    const r = this.resolve(name);
    return r?.c.shapes.get(r.local);
  }

  addDelta(name: string, delta: tf.Tensor, scale: number): void {
    const { c, local } = this.require(name);
    const next = tf.tidy(() => {
      const current = tf.tensor(c.overrides.current(local), c.overrides.weights.get(local)?.dims);
      return tf.add(current, tf.mul(c.overrides.toGraphLayout(local, delta), scale));
    });
    c.overrides.setFused(local, next.dataSync() as Float32Array);
    next.dispose();
  }

  snapshotWeight(name: string): WeightSnapshot {
    const { c, local } = this.require(name);
    return new FusedSnapshot(c.overrides.fusedValue(local));
  }

  restoreWeight(name: string, snapshot: WeightSnapshot): void {
    const { c, local } = this.require(name);
    if (!(snapshot instanceof FusedSnapshot)) throw new Error(`restoreWeight(${name}): not a snapshot of this pipeline`);
    c.overrides.setFused(local, snapshot.value ?? null);
  }

  private resolve(name: string): { c: Component; local: string } | undefined {
    const dot = name.indexOf('.');
    const c = this.components.get(name.slice(0, dot));
    return c ? { c, local: name.slice(dot + 1) } : undefined;
  }

  private require(name: string): { c: Component; local: string } {
    const r = this.resolve(name);
    if (!r || !r.c.shapes.has(r.local)) throw new Error(`no base weight named ${name}`);
    return r;
  }
}
