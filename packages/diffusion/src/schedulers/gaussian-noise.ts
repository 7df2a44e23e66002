import { createRequire } from 'node:module';
import type * as tf from '@tensorflow/tfjs';
import { sizeOf } from '../latents/host-tensor.js';
import { toTf } from '../latents/tfjs-interop.js';
import type { NoiseSource } from './types.js';

/** seedrandom (CommonJS, no bundled types): only the `alea` generator is used. */
const seedrandom = createRequire(import.meta.url)('seedrandom') as { alea(seed: string): () => number };

/**
 * The service's seeded standard-normal source (docs/spec/diffusion.md §8.3): seedrandom's `alea` PRNG with the
 * Box–Muller transform, using both outputs of each pair. Same seed → same draws, within this
 * implementation only (PyTorch's generator is not reproduced).
 */
export class GaussianNoise {
  private readonly next: () => number;
  private spare: number | null = null;

  constructor(seed: number | string) {
    this.next = seedrandom.alea(String(seed));
  }

  /** One standard-normal value. */
  sample(): number {
    if (this.spare !== null) {
      const v = this.spare;
      this.spare = null;
      return v;
    }
    let u = 0;
    // Box–Muller needs u in (0, 1]: log(0) would be -Infinity.
    while (u === 0) u = this.next();
    const v = this.next();
    const r = Math.sqrt(-2 * Math.log(u));
    this.spare = r * Math.sin(2 * Math.PI * v);
    return r * Math.cos(2 * Math.PI * v);
  }

  /** `size` standard-normal values. */
  fill(size: number): Float32Array {
    const out = new Float32Array(size);
    for (let i = 0; i < size; i++) out[i] = this.sample();
    return out;
  }

  /** A TF.js tensor of standard-normal values (owned by the caller); loads TF.js. */
  tensor(shape: number[]): tf.Tensor {
    return toTf({ data: this.fill(sizeOf(shape)), shape });
  }

  /** This generator as a scheduler {@link NoiseSource}. */
  asSource(): NoiseSource {
    return (shape) => this.fill(shape.reduce((a, b) => a * b, 1));
  }
}
