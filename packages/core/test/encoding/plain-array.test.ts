import { describe, expect, it } from 'vitest';
import { plainArray } from '../../src/encoding/plain-array.js';

describe('plainArray', () => {
  it('copies any typed array into a plain array, element for element', () => {
    const f32 = Float32Array.of(0.1, -0, Number.NaN, Number.POSITIVE_INFINITY, 3.4e38);
    const copy = plainArray(f32);
    expect(Array.isArray(copy)).toBe(true);
    expect(copy).toEqual(Array.from(f32));
    expect(Object.is(copy[1], -0)).toBe(true);
    expect(plainArray(new Uint8Array(0))).toEqual([]);
  });

  it('maps while copying (bool bytes, 64-bit integers as decimal strings)', () => {
    expect(plainArray(Uint8Array.of(0, 1, 2), (v) => v !== 0)).toEqual([false, true, true]);
    expect(plainArray(BigInt64Array.of(-(2n ** 63n), 2n ** 63n - 1n), String)).toEqual([
      '-9223372036854775808',
      '9223372036854775807',
    ]);
  });

  it('is a copy: later writes to the source do not show', () => {
    const source = Int32Array.of(1, 2, 3);
    const copy = plainArray(source);
    source[0] = 9;
    expect(copy).toEqual([1, 2, 3]);
  });
});
