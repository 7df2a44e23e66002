import * as tf from '@tensorflow/tfjs';
import { checkedShape, type WeightKind, WeightShapeError, type WeightSpec } from './weight-spec.js';

const prod = (s: readonly number[]): number => s.reduce((a, b) => a * b, 1);

/** Convert torch-layout data to this store's layout (pure JS; no tfjs memory churn at load). */
export function toTfLayout(
  kind: WeightKind,
  shape: readonly number[],
  data: Float32Array,
): { shape: number[]; data: Float32Array } {
  if (kind === 'linear') {
    const [o, i] = shape;
    const out = new Float32Array(o * i);
    for (let r = 0; r < o; r++) for (let c = 0; c < i; c++) out[c * o + r] = data[r * i + c];
    return { shape: [i, o], data: out };
  }
  if (kind === 'conv') {
    const [o, i, kh, kw] = shape;
    const out = new Float32Array(data.length);
    for (let a = 0; a < o; a++)
      for (let b = 0; b < i; b++)
        for (let y = 0; y < kh; y++)
          for (let x = 0; x < kw; x++)
            out[((y * kw + x) * i + b) * o + a] = data[((a * i + b) * kh + y) * kw + x];
    return { shape: [kh, kw, i, o], data: out };
  }
  return { shape: [...shape], data };
}

/** The weights of one component (text_encoder, unet, vae) held as kept tfjs tensors. */
export class WeightStore {
  private readonly tensors = new Map<string, tf.Tensor>();
  private readonly specs = new Map<string, WeightSpec>();

  constructor(
    readonly component: string,
    specs: readonly WeightSpec[],
  ) {
    for (const s of specs) this.specs.set(s.name, s);
  }

  specList(): WeightSpec[] {
    return [...this.specs.values()];
  }

  spec(name: string): WeightSpec {
    const s = this.specs.get(name);
    if (!s) throw new Error(`${this.component} has no weight named ${name}`);
    return s;
  }

  has(name: string): boolean {
    return this.specs.has(name);
  }

  /** Set a weight from torch-layout float32 data (checked against the declared shape). */
  setTorch(name: string, shape: readonly number[], data: Float32Array): void {
    const spec = this.spec(name);
    checkedShape(this.component, spec, shape);
    const converted = toTfLayout(spec.kind, spec.shape, data);
    const t = tf.keep(tf.tensor(converted.data, converted.shape, 'float32'));
    this.tensors.get(name)?.dispose();
    this.tensors.set(name, t);
  }

  /** Set a weight from a tensor already in this store's layout (takes ownership; benchmarks, tests). */
  adopt(name: string, tensor: tf.Tensor): void {
    this.spec(name);
    this.tensors.get(name)?.dispose();
    this.tensors.set(name, tf.keep(tensor));
  }

  get(name: string): tf.Tensor {
    const t = this.tensors.get(name);
    if (!t) throw new Error(`${this.component}: weight ${name} is not loaded`);
    return t;
  }

  /** Names declared but not set. */
  missing(): string[] {
    return [...this.specs.keys()].filter((n) => !this.tensors.has(n));
  }

  /** Add `scale · delta` (delta in torch layout, shape of the weight) to a weight. */
  addTorchDelta(name: string, delta: Float32Array, scale = 1): void {
    const spec = this.spec(name);
    if (delta.length !== prod(spec.shape))
      throw new WeightShapeError(
        `${this.component}: delta for ${name} has ${delta.length} values, weight [${spec.shape.join(', ')}] has ${prod(spec.shape)}`,
      );
    const converted = toTfLayout(spec.kind, spec.shape, delta);
    const old = this.get(name);
    const next = tf.tidy(() =>
      tf.add(old, tf.mul(tf.tensor(converted.data, converted.shape, 'float32'), scale)),
    );
    this.tensors.set(name, tf.keep(next));
    old.dispose();
  }

  /** Add `scale · delta` for a torch-layout delta tensor (not disposed; owned by the caller). */
  addDelta(name: string, delta: tf.Tensor, scale = 1): void {
    const spec = this.spec(name);
    if (delta.shape.length !== spec.shape.length || delta.shape.some((d, i) => d !== spec.shape[i]))
      throw new WeightShapeError(
        `${this.component}: delta for ${name} has shape [${delta.shape.join(', ')}], weight is [${spec.shape.join(', ')}]`,
      );
    const old = this.get(name);
    const next = tf.tidy(() => {
      const d =
        spec.kind === 'linear'
          ? tf.transpose(delta, [1, 0])
          : spec.kind === 'conv'
            ? tf.transpose(delta, [2, 3, 1, 0])
            : delta;
      return tf.add(old, tf.mul(d, scale));
    });
    this.tensors.set(name, tf.keep(next));
    old.dispose();
  }

  /** Replace a weight by a tensor already in this store's layout (takes ownership). */
  replace(name: string, tensor: tf.Tensor): void {
    const old = this.get(name);
    if (old.shape.join() !== tensor.shape.join())
      throw new WeightShapeError(
        `${this.component}: replacement for ${name} has shape [${tensor.shape.join(', ')}], stored [${old.shape.join(', ')}]`,
      );
    this.tensors.set(name, tensor);
    old.dispose();
  }

  /** Torch-layout copy of a weight (for LoRA bookkeeping and tests). */
  readTorch(name: string): Float32Array {
    const spec = this.spec(name);
    const t = this.get(name);
    const data = t.dataSync() as Float32Array;
    if (spec.kind === 'linear') {
      const [o, i] = spec.shape;
      const out = new Float32Array(o * i);
      for (let r = 0; r < o; r++) for (let c = 0; c < i; c++) out[r * i + c] = data[c * o + r];
      return out;
    }
    if (spec.kind === 'conv') {
      const [o, i, kh, kw] = spec.shape;
      const out = new Float32Array(data.length);
      for (let a = 0; a < o; a++)
        for (let b = 0; b < i; b++)
          for (let y = 0; y < kh; y++)
            for (let x = 0; x < kw; x++)
              out[((a * i + b) * kh + y) * kw + x] = data[((y * kw + x) * i + b) * o + a];
      return out;
    }
    return Float32Array.from(data);
  }

  dispose(): void {
    for (const t of this.tensors.values()) t.dispose();
    this.tensors.clear();
  }
}
