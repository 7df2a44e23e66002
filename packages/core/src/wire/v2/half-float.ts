/** IEEE 754 half precision ↔ number, for FP16 tensors in the binary form. */

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** The 16 bits of the half nearest to `value` (round to nearest even; overflow → infinity). */
export function toHalfBits(value: number): number {
  f32[0] = value;
  return floatBitsToHalf(u32[0]!);
}

/**
 * The half nearest to the float32 whose bits are `x` (round to nearest even; subnormals, infinities and NaN
 * kept; overflow → infinity). Works on bits so that whole Float32Arrays convert without a number round trip.
 */
export function floatBitsToHalf(x: number): number {
  const sign = (x >>> 16) & 0x8000;
  const exp = (x >>> 23) & 0xff;
  let mant = x & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant ? 0x200 : 0);
  const e = exp - 127 + 15;
  if (e >= 0x1f) return sign | 0x7c00;
  if (e <= 0) {
    if (e < -10) return sign;
    mant |= 0x800000;
    const shift = 14 - e;
    let half = mant >>> shift;
    const rest = mant & ((1 << shift) - 1);
    const midpoint = 1 << (shift - 1);
    if (rest > midpoint || (rest === midpoint && half & 1)) half++;
    return sign | half;
  }
  let half = (e << 10) | (mant >>> 13);
  const rest = mant & 0x1fff;
  if (rest > 0x1000 || (rest === 0x1000 && half & 1)) half++;
  return sign | half;
}

/** The number a half's 16 bits hold. */
export function fromHalfBits(bits: number): number {
  const sign = bits & 0x8000 ? -1 : 1;
  const exp = (bits >>> 10) & 0x1f;
  const mant = bits & 0x3ff;
  if (exp === 0) return sign * mant * 2 ** -24;
  if (exp === 0x1f) return mant ? Number.NaN : sign * Number.POSITIVE_INFINITY;
  return sign * (1 + mant / 1024) * 2 ** (exp - 15);
}
