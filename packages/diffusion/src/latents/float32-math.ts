import type { HostTensor } from './host-tensor.js';

/**
 * Element-wise float32 arithmetic on host tensors, one rounding per operation as TF.js kernels and torch do
 * (a JS double holds the exact product or sum of two float32 values, so `Math.fround` of it is the float32
 * result). Scalars are float32 too, as a TF.js scalar tensor is. Each call returns a new tensor.
 */
type Operand = HostTensor | number;

const f32 = Math.fround;

type BinaryOp = 'add' | 'sub' | 'mul' | 'div';

// One loop per operation and operand kind: a callback per element would run several times slower (the latents
// of a 512² SD1 step are 32 K values, touched by a dozen operations).
function binary(a: HostTensor, b: Operand, op: BinaryOp): HostTensor {
  const x = a.data;
  const n = x.length;
  const out = new Float32Array(n);
  if (typeof b === 'number') {
    const s = f32(b);
    if (op === 'add') for (let i = 0; i < n; i++) out[i] = x[i] + s;
    else if (op === 'sub') for (let i = 0; i < n; i++) out[i] = x[i] - s;
    else if (op === 'mul') for (let i = 0; i < n; i++) out[i] = x[i] * s;
    else for (let i = 0; i < n; i++) out[i] = x[i] / s;
  } else {
    if (b.data.length !== n) throw new Error(`shapes [${a.shape}] and [${b.shape}] differ`);
    const y = b.data;
    if (op === 'add') for (let i = 0; i < n; i++) out[i] = x[i] + y[i];
    else if (op === 'sub') for (let i = 0; i < n; i++) out[i] = x[i] - y[i];
    else if (op === 'mul') for (let i = 0; i < n; i++) out[i] = x[i] * y[i];
    else for (let i = 0; i < n; i++) out[i] = x[i] / y[i];
  }
  return { data: out, shape: a.shape };
}

export const add = (a: HostTensor, b: Operand): HostTensor => binary(a, b, 'add');
export const sub = (a: HostTensor, b: Operand): HostTensor => binary(a, b, 'sub');
export const mul = (a: HostTensor, b: Operand): HostTensor => binary(a, b, 'mul');
export const div = (a: HostTensor, b: Operand): HostTensor => binary(a, b, 'div');

/** `clip(x, lo, hi)` with float32 bounds. */
export function clip(a: HostTensor, lo: number, hi: number): HostTensor {
  const l = f32(lo);
  const h = f32(hi);
  return { data: a.data.map((v) => Math.min(Math.max(v, l), h)), shape: a.shape };
}

/** A copy of `a` (schedulers hand out tensors their caller may keep while they keep theirs). */
export function copy(a: HostTensor): HostTensor {
  return { data: a.data.slice(), shape: a.shape };
}

/**
 * Standard deviation of each batch entry over all its other axes (population variance, as TF.js `moments`),
 * as `[B]` float32 values: mean of the values, then mean of the squared deviations, each a float32 sum divided by
 * the count.
 */
export function stdPerBatch(a: HostTensor): Float32Array {
  const b = a.shape[0];
  const per = a.data.length / b;
  const out = new Float32Array(b);
  for (let k = 0; k < b; k++) {
    const row = a.data.subarray(k * per, (k + 1) * per);
    let sum = 0;
    for (let i = 0; i < per; i++) sum = f32(sum + row[i]);
    const mean = f32(sum / per);
    let sq = 0;
    for (let i = 0; i < per; i++) {
      const d = f32(row[i] - mean);
      sq = f32(sq + f32(d * d));
    }
    out[k] = f32(Math.sqrt(f32(sq / per)));
  }
  return out;
}
