/**
 * Sinusoidal timestep embedding in float32 arithmetic, step by step as torch does it, so
 * large timesteps (t · freq ≈ 1000) round the same way as the reference.
 */
export function timestepEmbedding(
  t: number,
  dim: number,
  flipSinToCos: boolean,
  freqShift: number,
): Float32Array {
  const f = Math.fround;
  const half = dim / 2;
  const out = new Float32Array(dim);
  const lnMax = f(-Math.log(10000));
  for (let k = 0; k < half; k++) {
    const exponent = f(f(lnMax * k) / f(half - freqShift));
    const arg = f(f(t) * f(Math.exp(exponent)));
    const s = f(Math.sin(arg));
    const c = f(Math.cos(arg));
    if (flipSinToCos) {
      out[k] = c;
      out[half + k] = s;
    } else {
      out[k] = s;
      out[half + k] = c;
    }
  }
  return out;
}
