import { describe, expect, it } from 'vitest';
import { NumpyNdarray } from '../../src/io/descriptors/numpy-ndarray.js';
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
});
