import { readFileSync } from 'node:fs';

import { fileURLToPath } from 'node:url';
import type { HostTensor } from '../../src/latents/host-tensor.js';

/** The diffusers reference fixtures, kept in the repository (see fixtures/sd-reference/README.md). */
export const FIXTURE_DIR =
  process.env.TIFFIN_SD_FIXTURES ?? fileURLToPath(new URL('../fixtures/sd-reference', import.meta.url));

export interface Summary {
  shape: number[];
  mean: number;
  std: number;
  abs_sum: number;
  first: number[];
  probe_index: number[];
  probe: number[];
}
export interface Full {
  shape: number[];
  data: number[];
}

const cache = new Map<string, unknown>();
// biome-ignore lint/suspicious/noExplicitAny: fixture JSON is navigated dynamically
export function fixture(name: string): any {
  if (!cache.has(name)) cache.set(name, JSON.parse(readFileSync(`${FIXTURE_DIR}/${name}`, 'utf8')));
  return cache.get(name);
}

export function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length) throw new Error(`length ${a.length} vs ${b.length}`);
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
}

/** Max abs difference relative to the reference's largest magnitude (every value of `got` must be finite). */
export function maxRelativeDiff(ref: ArrayLike<number>, got: ArrayLike<number>): number {
  if (ref.length !== got.length) throw new Error(`length ${ref.length} vs ${got.length}`);
  let scale = 0;
  for (let i = 0; i < ref.length; i++) {
    if (!Number.isFinite(got[i])) throw new Error(`value ${i} is ${got[i]}`);
    scale = Math.max(scale, Math.abs(ref[i]));
  }
  return maxAbsDiff(ref, got) / scale;
}

/** Max abs error of `data` (flat, same layout as the summary) against first/probe values and the mean. */
export function summaryError(data: ArrayLike<number>, s: Summary): number {
  const c = compareSummary(data, s);
  return Math.max(c.maxAbs, c.meanAbs);
}

/** NCHW flat → NHWC flat. */
export function nchwToNhwc(data: ArrayLike<number>, [b, c, h, w]: number[]): Float32Array {
  const out = new Float32Array(b * h * w * c);
  for (let n = 0; n < b; n++)
    for (let ch = 0; ch < c; ch++)
      for (let y = 0; y < h; y++)
        for (let x = 0; x < w; x++)
          out[((n * h + y) * w + x) * c + ch] = data[((n * c + ch) * h + y) * w + x];
  return out;
}

/** NHWC flat → NCHW flat. */
export function nhwcToNchw(data: ArrayLike<number>, [b, h, w, c]: number[]): Float32Array {
  const out = new Float32Array(b * h * w * c);
  for (let n = 0; n < b; n++)
    for (let y = 0; y < h; y++)
      for (let x = 0; x < w; x++)
        for (let ch = 0; ch < c; ch++)
          out[((n * c + ch) * h + y) * w + x] = data[((n * h + y) * w + x) * c + ch];
  return out;
}

/** How far `data` is from a summary: max abs error of first/probe values, relative errors of the moments. */
export interface SummaryComparison {
  maxAbs: number;
  meanAbs: number;
  meanRel: number;
  stdRel: number;
  absSumRel: number;
}

/** Compares flat `data` with a summary (std over all values, ddof 0 as numpy). */
export function compareSummary(data: ArrayLike<number>, s: Summary): SummaryComparison {
  let maxAbs = 0;
  s.first.forEach((v, i) => {
    maxAbs = Math.max(maxAbs, Math.abs(data[i] - v));
  });
  s.probe_index.forEach((idx, i) => {
    maxAbs = Math.max(maxAbs, Math.abs(data[idx] - s.probe[i]));
  });
  let sum = 0;
  let absSum = 0;
  for (let i = 0; i < data.length; i++) {
    sum += data[i];
    absSum += Math.abs(data[i]);
  }
  const mean = sum / data.length;
  let sq = 0;
  for (let i = 0; i < data.length; i++) sq += (data[i] - mean) ** 2;
  const std = Math.sqrt(sq / data.length);
  const rel = (a: number, b: number) => Math.abs(a - b) / Math.max(Math.abs(b), 1e-12);
  return {
    maxAbs,
    meanAbs: Math.abs(mean - s.mean),
    meanRel: rel(mean, s.mean),
    stdRel: rel(std, s.std),
    absSumRel: rel(absSum, s.abs_sum),
  };
}

/**
 * The closed-form model of the scheduler fixtures (schedulers.json, docs/spec/diffusion.md §13):
 * m(x_in, t) = 0.5 · tanh(x_in) · cos(t/300) + 0.1 · sin(t/70), in float32 like the reference's torch maths.
 */
export function closedFormModel(x: HostTensor, t: number): HostTensor {
  const f = Math.fround;
  const c = f(Math.cos(f(t / 300)));
  const s = f(0.1 * f(Math.sin(f(t / 70))));
  return { data: x.data.map((v) => f(f(f(0.5 * f(Math.tanh(v))) * c) + s)), shape: x.shape };
}
