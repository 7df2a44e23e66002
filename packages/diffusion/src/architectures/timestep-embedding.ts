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

/** SDXL base's time ids per row: original height and width, crop top and left, target height and width. */
export const TIME_IDS = 6;
/** The SDXL refiner's (`requires_aesthetics_score`): original size, crop top-left, aesthetic score. */
export const AESTHETIC_TIME_IDS = 5;

/**
 * SDXL's micro-conditioning: each row's time ids (six for the base model, five with an aesthetic score) embedded like
 * a timestep and concatenated → `[B, n·dim]` row-major. The UNet reads only the concatenation's width.
 */
export function timeIdsEmbedding(
  timeIds: readonly (readonly number[])[],
  dim: number,
  flipSinToCos: boolean,
  freqShift: number,
): Float32Array {
  const n = timeIds[0]?.length ?? 0;
  const out = new Float32Array(timeIds.length * n * dim);
  for (let b = 0; b < timeIds.length; b++) {
    const row = timeIds[b];
    if (row.length !== n || n < 1) throw new RangeError(`time ids: ${n} per row, got ${row.length}`);
    for (let k = 0; k < n; k++)
      out.set(timestepEmbedding(row[k], dim, flipSinToCos, freqShift), (b * n + k) * dim);
  }
  return out;
}
