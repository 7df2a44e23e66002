import { closeSync, openSync, readSync } from 'node:fs';
import * as tf from '@tensorflow/tfjs';
import type { Tensor as OrtTensor } from 'onnxruntime-node';
import type { LowRankBranchesByName } from '../../models/low-rank.js';
import type { OverridableWeight } from './graph-builder.js';
import type { OrtModule } from './session.js';

/**
 * Per-request LoRA on one session without rebuilding it: every LoRA-able Linear/Conv weight is an
 * initializer that is also a graph input, so a run may feed a replacement under the same name.
 * A LoRA's weights are merged (`W + s·alpha/r·up@down`, float32, in the graph's storage layout)
 * once per request and fed on every step; runs without a LoRA feed nothing and use the stored
 * weights. Fused LoRAs (`mergeLora`, the start-up LoRA) are replacements kept until unmerged.
 */
export class WeightOverrides {
  /** Fused replacements (graph layout), by diffusers name. */
  private readonly fused = new Map<string, Float32Array>();
  /** Merged weights per run-time LoRA (one merge per request, dropped with the LoRA). */
  private readonly perLora = new WeakMap<LowRankBranchesByName, Map<string, Float32Array>>();

  constructor(
    private readonly ort: OrtModule,
    private readonly dataPath: string,
    readonly weights: ReadonlyMap<string, OverridableWeight>,
  ) {}

  has(name: string): boolean {
    return this.weights.has(name);
  }

  private info(name: string): OverridableWeight {
    const w = this.weights.get(name);
    if (!w) throw new Error(`no LoRA-able weight named ${name} in this graph`);
    return w;
  }

  /** The stored (base) value in graph layout, read from the external data file. */
  base(name: string): Float32Array {
    const w = this.info(name);
    const bytes = Buffer.alloc(w.length);
    const fd = openSync(this.dataPath, 'r');
    try {
      let done = 0;
      while (done < w.length) {
        const n = readSync(fd, bytes, done, w.length - done, w.offset + done);
        if (n === 0) throw new Error(`${this.dataPath}: truncated at ${name}`);
        done += n;
      }
    } finally {
      closeSync(fd);
    }
    return new Float32Array(bytes.buffer, bytes.byteOffset, w.length / 4).slice();
  }

  /** Current value: the fused replacement, else the stored weight. */
  current(name: string): Float32Array {
    return this.fused.get(name) ?? this.base(name);
  }

  /** Graph-layout value of a torch-layout tensor for this weight. */
  toGraphLayout(name: string, torch: tf.Tensor): tf.Tensor {
    return this.info(name).layout === 'linear-t' ? tf.transpose(torch, [1, 0]) : torch;
  }

  /** Sets (or, with null, removes) a fused replacement. */
  setFused(name: string, value: Float32Array | null): void {
    this.info(name);
    if (value) this.fused.set(name, value);
    else this.fused.delete(name);
  }

  fusedValue(name: string): Float32Array | undefined {
    return this.fused.get(name);
  }

  private merged(branches: LowRankBranchesByName): Map<string, Float32Array> {
    let m = this.perLora.get(branches);
    if (m) return m;
    m = new Map();
    for (const [name, list] of branches) {
      const w = this.info(name);
      const delta = tf.tidy(() => {
        let sum: tf.Tensor | null = null;
        for (const b of list) {
          let d: tf.Tensor;
          if (w.layout === 'linear-t') d = tf.matMul(b.down as tf.Tensor2D, b.up); // [in, out]
          else {
            // conv: down [kh, kw, in, r] · up [r, out] → [kh, kw, in, out] → torch [out, in, kh, kw]
            const [kh, kw, inn, r] = b.down.shape;
            d = tf.matMul(b.down.reshape([kh * kw * inn, r]) as tf.Tensor2D, b.up)
              .reshape([kh, kw, inn, b.up.shape[1]])
              .transpose([3, 2, 0, 1]);
          }
          sum = sum ? tf.add(sum, d) : d;
        }
        return tf.add(tf.tensor(this.current(name), w.dims), sum as tf.Tensor);
      });
      m.set(name, delta.dataSync() as Float32Array);
      delta.dispose();
    }
    this.perLora.set(branches, m);
    return m;
  }

  /** Inputs to feed for a run: fused replacements, then the run-time LoRA's merged weights. */
  feeds(branches?: LowRankBranchesByName): Record<string, OrtTensor> {
    const out: Record<string, OrtTensor> = {};
    const put = (name: string, data: Float32Array) => {
      const w = this.info(name);
      out[w.onnxName] = new this.ort.Tensor('float32', data, w.dims);
    };
    for (const [name, data] of this.fused) put(name, data);
    if (branches && branches.size > 0) for (const [name, data] of this.merged(branches)) put(name, data);
    return out;
  }
}
