import { describe, expect, it } from 'vitest';
import { hasLongInteger, NumpyNdarray } from '../../src/io/descriptors/numpy-ndarray.js';
import { NDArray } from '../../src/ndarray/index.js';
import { request } from './helpers.js';

// The descriptor takes JSON.parse's fast path only where it gives the same array as the exact parser.
describe('NumpyNdarray request parsing: fast path keeps exact semantics', () => {
  it('integer literals beyond 2^53 stay exact (exact path)', async () => {
    const arr = await new NumpyNdarray().fromHttpRequest(request('[9007199254740993, 1]'));
    expect(arr.dtype).toBe('int64');
    expect((arr.data as BigInt64Array)[0]).toBe(9007199254740993n);
  });

  it('a long fraction is not mistaken for a long integer, and floats parse exactly', async () => {
    const arr = await new NumpyNdarray({ dtype: 'float64' }).fromHttpRequest(
      request('[0.8414709848078965, -12.5]'),
    );
    expect(Array.from(arr.data as Float64Array)).toEqual([0.8414709848078965, -12.5]);
  });

  it('integral float literals still infer float64 without a dtype', async () => {
    const arr = await new NumpyNdarray().fromHttpRequest(request('[1.0, 2.0]'));
    expect(arr.dtype).toBe('float64');
    const ints = await new NumpyNdarray().fromHttpRequest(request('[1, 2]'));
    expect(ints.dtype).toBe('int64');
  });

  it('NaN literals and non-ASCII strings take the exact path', async () => {
    const nan = await new NumpyNdarray({ dtype: 'float64' }).fromHttpRequest(request('[1.5, NaN]'));
    expect(Number.isNaN((nan.data as Float64Array)[1])).toBe(true);
    const str = await new NumpyNdarray().fromHttpRequest(request('["é", "b"]'));
    expect(str.data).toEqual(['é', 'b']);
  });

  it('with a float dtype, long integer literals give the same floats as the exact parser', async () => {
    const body = '[12345678901234567890, 9007199254740993, 0.5]';
    const arr = await new NumpyNdarray({ dtype: 'float64' }).fromHttpRequest(request(body));
    // Number(BigInt) rounds to the nearest double, as the exact parser's float conversion does.
    expect(Array.from(arr.data as Float64Array)).toEqual([
      Number(12345678901234567890n),
      Number(9007199254740993n),
      0.5,
    ]);
    const f32 = await new NumpyNdarray({ dtype: 'float32' }).fromHttpRequest(request('[[0.1, 2], [3, 4.5]]'));
    expect(f32.shape).toEqual([2, 2]);
    expect(Array.from(f32.data as Float32Array)).toEqual(Array.from(new Float32Array([0.1, 2, 3, 4.5])));
  });

  it('a float dtype that the values cannot take falls back to inference over exact literals', async () => {
    const arr = await new NumpyNdarray({ dtype: 'float64' }).fromHttpRequest(
      request('["abc", 12345678901234567890]'),
    );
    expect(arr.dtype).toBe('str');
    expect(arr.data).toEqual(['abc', '12345678901234567890']);
  });

  it('ragged input under a float dtype still gets the descriptive 400', async () => {
    await expect(
      new NumpyNdarray({ dtype: 'float64' }).fromHttpRequest(request('[[1.5, 2], [3]]')),
    ).rejects.toThrow(/NumpyNdarray input: Ragged nested sequence/);
  });

  it('hasLongInteger finds 16+ digit integers only', () => {
    const has = (s: string) => hasLongInteger(Buffer.from(s));
    expect(has('[1234567890123456]')).toBe(true);
    expect(has('1234567890123456')).toBe(true);
    expect(has('[123456789012345]')).toBe(false);
    expect(has('[0.12345678901234567]')).toBe(false);
    expect(has('[12345678901234567.5]')).toBe(false);
    expect(has('[12345678901234567e3]')).toBe(false);
    expect(has('[12345678901234567E3]')).toBe(false);
    expect(has('[1.5, 12345678901234567]')).toBe(true);
  });
});

describe('NDArray.from float fill', () => {
  it('regular nested numbers go straight to float storage, with the dtype asked or inferred', () => {
    const inferred = NDArray.from([
      [1, 2.5],
      [3, 4],
    ]);
    expect(inferred.dtype).toBe('float64');
    expect(inferred.shape).toEqual([2, 2]);
    expect(Array.from(inferred.data as Float64Array)).toEqual([1, 2.5, 3, 4]);
    const f32 = NDArray.from([1, 2, 3], 'float32');
    expect(f32.data).toBeInstanceOf(Float32Array);
  });

  it('all-integer input still infers int64; mixed and ragged input keep their general rules', () => {
    expect(NDArray.from([1, 2, 3]).dtype).toBe('int64');
    expect(NDArray.from([1.5, true]).dtype).toBe('float64');
    expect(Array.from(NDArray.from([1.5, true]).data as Float64Array)).toEqual([1.5, 1]);
    expect(() => NDArray.from([[1.5], [2, 3]])).toThrow(/Ragged/);
    expect(NDArray.from([[], []]).shape).toEqual([2, 0]);
  });
});
