/** Small numeric helpers that mirror numpy/torch behaviour where the reference depends on it. */

/** Rounds a double to float32, as torch/numpy float32 arithmetic stores every intermediate. */
export const f32 = Math.fround;

/** numpy's `round` (round half to even), which JS `Math.round` does not do on exact halves. */
export function roundHalfEven(x: number): number {
  const r = Math.round(x);
  // Math.round rounds halves up; on an exact half pick the even neighbour instead.
  if (Math.abs(x % 1) === 0.5) return 2 * Math.round(x / 2);
  return r;
}

/** numpy `linspace(start, stop, num)` in float64 (endpoint included). */
export function linspace(start: number, stop: number, num: number): number[] {
  if (num === 1) return [start];
  const step = (stop - start) / (num - 1);
  const out: number[] = [];
  for (let i = 0; i < num; i++) out.push(start + i * step);
  // numpy sets the endpoint exactly.
  out[num - 1] = stop;
  return out;
}

/**
 * torch.linspace(start, end, steps, dtype=float32): every operation in float32, first half counted
 * from the start and second half counted back from the end (ATen's RangeFactories kernel).
 */
export function torchLinspaceF32(start: number, end: number, steps: number): Float32Array {
  const out = new Float32Array(steps);
  if (steps === 1) {
    out[0] = start;
    return out;
  }
  const s = f32(start);
  const e = f32(end);
  const step = f32(f32(e - s) / (steps - 1));
  const halfway = Math.floor(steps / 2);
  for (let i = 0; i < steps; i++) {
    out[i] = i < halfway ? f32(s + f32(step * i)) : f32(e - f32(step * (steps - i - 1)));
  }
  return out;
}

/** numpy `arange(start, stop, step)` for a negative or positive real step. */
export function arange(start: number, stop: number, step: number): number[] {
  const n = Math.max(0, Math.ceil((stop - start) / step));
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push(start + i * step);
  return out;
}

/** numpy `interp(x, [0, 1, …, n-1], fp)`: piecewise-linear interpolation in float64. */
export function interpIndex(x: number, fp: ArrayLike<number>): number {
  const n = fp.length;
  if (x <= 0) return fp[0];
  if (x >= n - 1) return fp[n - 1];
  const j = Math.floor(x);
  const slope = fp[j + 1] - fp[j];
  return slope * (x - j) + fp[j];
}
