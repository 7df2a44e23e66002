import { GaussianNoise } from './gaussian-noise.js';

/** Bisection depth: the interval a query ends in is (t1 − t0) / 2^depth wide (≈ 1e-7 of the range). */
const DEPTH = 24;
/** Nodes kept between queries: the last two paths (a step's two queries share most of theirs). */
const CACHE = 2 * DEPTH + 2;

/**
 * One Brownian motion W on [t0, t1] with W(t0) = 0, fixed by its seed (docs/spec/diffusion.md §8.3): any W(t) is
 * reached by bisection, each midpoint drawn from the Brownian bridge between its interval's ends with draws seeded by
 * the node's path, so a value does not depend on which other values were asked for or in what order (the property
 * torchsde's BrownianTree gives k-diffusion's DPM++ SDE, where a step count change keeps the noise's shape). Below
 * the last level W is interpolated linearly. Not torchsde's generator: the same seed gives other numbers.
 */
export class BrownianTree {
  private readonly cache = new Map<string, Float32Array>();
  private readonly end: Float32Array;

  constructor(
    private readonly seed: string,
    private readonly t0: number,
    private readonly t1: number,
    private readonly size: number,
  ) {
    if (!(t1 > t0)) throw new Error(`BrownianTree: empty interval [${t0}, ${t1}]`);
    this.end = this.draws('', Math.sqrt(t1 - t0));
  }

  private draws(path: string, scale: number, mean?: (i: number) => number): Float32Array {
    const z = new GaussianNoise(`${this.seed}/${path}`).fill(this.size);
    for (let i = 0; i < z.length; i++) z[i] = (mean ? mean(i) : 0) + scale * z[i];
    return z;
  }

  /** W(t), t clamped to [t0, t1]. */
  value(t: number): Float32Array {
    let a = this.t0;
    let b = this.t1;
    if (t <= a) return new Float32Array(this.size);
    if (t >= b) return this.end.slice();
    let wa: Float32Array = new Float32Array(this.size);
    let wb: Float32Array = this.end;
    let path = '';
    for (let depth = 0; depth < DEPTH; depth++) {
      const m = (a + b) / 2;
      const wm = this.midpoint(path, wa, wb, (b - a) / 4);
      if (t < m) {
        b = m;
        wb = wm;
        path += 'l';
      } else {
        a = m;
        wa = wm;
        path += 'r';
      }
    }
    const w = (t - a) / (b - a);
    return wa.map((v, i) => v + w * (wb[i] - v));
  }

  /** The bridge's midpoint of the node at `path`: the mean of its ends plus sqrt(width / 4) times its draws. */
  private midpoint(path: string, wa: Float32Array, wb: Float32Array, variance: number): Float32Array {
    const hit = this.cache.get(path);
    if (hit) return hit;
    const wm = this.draws(`m${path}`, Math.sqrt(variance), (i) => (wa[i] + wb[i]) / 2);
    this.cache.set(path, wm);
    if (this.cache.size > CACHE) this.cache.delete(this.cache.keys().next().value as string);
    return wm;
  }

  /** (W(to) − W(from)) / sqrt|to − from|: a standard-normal draw for the interval, as k-diffusion's noise sampler. */
  increment(from: number, to: number): Float32Array {
    const lo = Math.min(from, to);
    const hi = Math.max(from, to);
    if (!(hi > lo)) return new Float32Array(this.size);
    const wLo = this.value(lo);
    const wHi = this.value(hi);
    const sign = to >= from ? 1 : -1;
    const norm = sign / Math.sqrt(hi - lo);
    return wHi.map((v, i) => (v - wLo[i]) * norm);
  }
}
