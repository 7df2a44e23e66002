/**
 * A float32 tensor in host memory: C-order values and a shape. The latent-side math (schedulers, guidance, noise,
 * image conversion, previews) works on these on every engine, so it is written once; the TF.js engine converts at
 * its model boundary, onnxruntime feeds the arrays to its sessions as they are.
 */
export interface HostTensor {
  readonly data: Float32Array;
  readonly shape: readonly number[];
}

/** Number of values of `shape`. */
export function sizeOf(shape: readonly number[]): number {
  return shape.reduce((a, b) => a * b, 1);
}

/** A host tensor over `data`, checked against `shape`. */
export function hostTensor(data: Float32Array, shape: readonly number[]): HostTensor {
  if (data.length !== sizeOf(shape))
    throw new Error(`${data.length} values do not fill a tensor of shape [${shape.join(', ')}]`);
  return { data, shape: [...shape] };
}

/** Permutes the axes of `x` (numpy `transpose(axes)`). */
export function transpose(x: HostTensor, axes: readonly number[]): HostTensor {
  const rank = x.shape.length;
  const shape = axes.map((a) => x.shape[a]);
  const inStrides = stridesOf(x.shape);
  const strides = axes.map((a) => inStrides[a]);
  const out = new Float32Array(x.data.length);
  const index = new Array<number>(rank).fill(0);
  let from = 0;
  for (let i = 0; i < out.length; i++) {
    out[i] = x.data[from];
    // Odometer over the output shape, tracking the input offset.
    for (let d = rank - 1; d >= 0; d--) {
      index[d]++;
      from += strides[d];
      if (index[d] < shape[d]) break;
      from -= strides[d] * shape[d];
      index[d] = 0;
    }
  }
  return { data: out, shape };
}

function stridesOf(shape: readonly number[]): number[] {
  const strides = new Array<number>(shape.length);
  let s = 1;
  for (let d = shape.length - 1; d >= 0; d--) {
    strides[d] = s;
    s *= shape[d];
  }
  return strides;
}

/** NCHW ↔ NHWC permutations. */
export const NCHW_TO_NHWC = [0, 2, 3, 1] as const;
export const NHWC_TO_NCHW = [0, 3, 1, 2] as const;

/** Joins tensors along `axis` (all other dimensions equal). */
export function concat(parts: readonly HostTensor[], axis = 0): HostTensor {
  const first = parts[0].shape;
  const a = axis < 0 ? first.length + axis : axis;
  const outer = sizeOf(first.slice(0, a));
  const widths = parts.map((p) => sizeOf(p.shape.slice(a)));
  const total = widths.reduce((x, y) => x + y, 0);
  const out = new Float32Array(outer * total);
  for (let o = 0; o < outer; o++) {
    let at = o * total;
    parts.forEach((p, k) => {
      out.set(p.data.subarray(o * widths[k], (o + 1) * widths[k]), at);
      at += widths[k];
    });
  }
  const shape = [...first];
  shape[a] = parts.reduce((s, p) => s + p.shape[a], 0);
  return { data: out, shape };
}

/** Splits along the first axis into `n` equal parts. */
export function splitBatch(x: HostTensor, n: number): HostTensor[] {
  const rows = x.shape[0] / n;
  const per = x.data.length / n;
  return Array.from({ length: n }, (_, k) => ({
    data: x.data.slice(k * per, (k + 1) * per),
    shape: [rows, ...x.shape.slice(1)],
  }));
}

/** Repeats `x` `times` along the first axis (`tile(x, [times, 1, …])`). */
export function repeatBatch(x: HostTensor, times: number): HostTensor {
  const out = new Float32Array(x.data.length * times);
  for (let k = 0; k < times; k++) out.set(x.data, k * x.data.length);
  return { data: out, shape: [x.shape[0] * times, ...x.shape.slice(1)] };
}
