import type * as tf from '@tensorflow/tfjs';
import type { ClipTextConfig } from '../../src/architectures/clip-text.js';
import { clipTextWeightSpecs } from '../../src/architectures/clip-text.js';
import { unetWeightSpecs } from '../../src/architectures/unet.js';
import type { UNetConfig } from '../../src/architectures/unet-config.js';
import type { LoraTarget, WeightSnapshot } from '../../src/lora/types.js';
import { tinyConfigs } from '../../src/tiny/tiny-configs.js';
import { detWeight } from '../../src/weights/deterministic.js';

/** A LoRA target over plain torch-layout Float32Arrays (the test's stand-in for a pipeline). */
export class ArrayTarget implements LoraTarget {
  readonly weights = new Map<string, { shape: number[]; data: Float32Array }>();
  /** Throw from addDelta after this many calls (rollback tests). */
  failAfter = Number.POSITIVE_INFINITY;
  calls = 0;

  baseWeightNames(): Iterable<string> {
    return this.weights.keys();
  }

  baseWeightShape(name: string): readonly number[] | undefined {
    return this.weights.get(name)?.shape;
  }

  addDelta(name: string, delta: tf.Tensor, scale: number): void {
    if (++this.calls > this.failAfter) throw new Error('addDelta failed on purpose');
    const w = this.weights.get(name);
    if (!w) throw new Error(`no ${name}`);
    if (delta.shape.join() !== w.shape.join()) throw new Error(`delta shape ${delta.shape} vs ${w.shape}`);
    const d = delta.dataSync();
    // float32 add of a float32 product, like `W + s·ΔW` in torch.
    for (let i = 0; i < d.length; i++) w.data[i] = Math.fround(w.data[i] + Math.fround(scale * d[i]));
  }

  clone(): Map<string, Float32Array> {
    return new Map([...this.weights].map(([k, v]) => [k, Float32Array.from(v.data)]));
  }
}

/** The same, with snapshot/restore so unmerge is bit-exact. */
export class SnapshotArrayTarget extends ArrayTarget {
  snapshotWeight(name: string): WeightSnapshot {
    const saved = Float32Array.from(this.weights.get(name)?.data ?? []);
    return { dispose: () => undefined, saved } as WeightSnapshot & { saved: Float32Array };
  }

  restoreWeight(name: string, snapshot: WeightSnapshot): void {
    (this.weights.get(name) as { data: Float32Array }).data.set(
      (snapshot as WeightSnapshot & { saved: Float32Array }).saved,
    );
  }
}

/** The tiny sd1 pipeline's UNet and text-encoder weights (docs/spec/diffusion.md §11.3 values) in a target. */
export function tinyTarget<T extends ArrayTarget>(make: () => T): T {
  const c = tinyConfigs('sd1');
  const t = make();
  for (const s of unetWeightSpecs(c.unet as unknown as UNetConfig)) {
    t.weights.set(`unet.${s.name}`, { shape: [...s.shape], data: detWeight(s.name, s.shape) });
  }
  for (const s of clipTextWeightSpecs(c.textEncoder as unknown as ClipTextConfig)) {
    t.weights.set(`text_encoder.${s.name}`, { shape: [...s.shape], data: detWeight(s.name, s.shape) });
  }
  return t;
}
