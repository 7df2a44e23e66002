/**
 * The deterministic "random" tensors of the reference harness (docs/spec/diffusion.md §11.3): every value is a
 * function of the tensor name and flat index, so TS and Python produce bit-identical weights.
 */

export function fnv1a32(name: string): number {
  let h = 0x811c9dc5;
  for (const b of new TextEncoder().encode(name)) {
    h = Math.imul(h ^ b, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

function mix(x: number): number {
  x = (x ^ (x >>> 16)) >>> 0;
  x = Math.imul(x, 0x7feb352d) >>> 0;
  x = (x ^ (x >>> 15)) >>> 0;
  x = Math.imul(x, 0x846ca68b) >>> 0;
  x = (x ^ (x >>> 16)) >>> 0;
  return x;
}

/** u_i in [-1, 1) as float64. */
export function detUniform(name: string, size: number): Float64Array {
  const h = fnv1a32(name);
  const out = new Float64Array(size);
  for (let i = 0; i < size; i++) {
    const x = (h + Math.imul(i, 0x9e3779b9)) >>> 0;
    out[i] = (mix(x) / 2 ** 32) * 2 - 1;
  }
  return out;
}

const prod = (s: readonly number[]): number => s.reduce((a, b) => a * b, 1);

/** The deterministic weight for `name` with torch shape `shape` (docs/spec/diffusion.md §11.3). */
export function detWeight(name: string, shape: readonly number[]): Float32Array {
  const u = detUniform(name, prod(shape));
  const out = new Float32Array(u.length);
  if (shape.length >= 2) {
    const f = Math.sqrt(3 / prod(shape.slice(1)));
    for (let i = 0; i < u.length; i++) out[i] = u[i] * f;
  } else if (shape.length === 1 && name.endsWith('.bias')) {
    for (let i = 0; i < u.length; i++) out[i] = 0.1 * u[i];
  } else {
    for (let i = 0; i < u.length; i++) out[i] = 1 + 0.1 * u[i];
  }
  return out;
}

/** Test inputs of the harness: `u_i · sqrt(3) · scale`. */
export function detInput(name: string, shape: readonly number[], scale = 1): Float32Array {
  const u = detUniform(name, prod(shape));
  const out = new Float32Array(u.length);
  const f = Math.sqrt(3) * scale;
  for (let i = 0; i < u.length; i++) out[i] = u[i] * f;
  return out;
}
