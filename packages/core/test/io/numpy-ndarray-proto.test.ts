import { describe, expect, it } from 'vitest';
import { NumpyNdarray } from '../../src/io/descriptors/numpy-ndarray.js';
import { NDArray } from '../../src/ndarray/index.js';
import { expectClientError } from './helpers.js';

describe('NumpyNdarray gRPC mapping (11.3)', () => {
  const d = new NumpyNdarray();

  it('reads each typed field by its DType, reshapes, keeps int64 exact', async () => {
    const f = await d.fromProto({ dtype: 'DTYPE_FLOAT', shape: [2, 2], float_values: [1, 2, 3, 4] });
    expect(f.dtype).toBe('float32');
    expect(f.shape).toEqual([2, 2]);
    const i = await d.fromProto({ dtype: 5, int64_values: ['9007199254740993', '-1'] });
    expect(i.dtype).toBe('int64');
    expect(i.data[0]).toBe(9007199254740993n);
    const u = await d.fromProto({ dtype: 'DTYPE_UINT64', uint64_values: ['18446744073709551615'] });
    expect(u.data[0]).toBe(18446744073709551615n);
    expect((await d.fromProto({ dtype: 'DTYPE_BOOL', bool_values: [true, false] })).toArray()).toEqual([
      true,
      false,
    ]);
    expect((await d.fromProto({ dtype: 'DTYPE_STRING', string_values: ['a'] })).toArray()).toEqual(['a']);
    expect((await d.fromProto({ dtype: 'DTYPE_UINT32', uint32_values: [7] })).dtype).toBe('uint32');
    expect((await d.fromProto({ dtype: 'DTYPE_DOUBLE', double_values: [0.5] })).dtype).toBe('float64');
  });

  it('UNSPECIFIED: infers from the one non-empty field; a shape without values only when it has no elements', async () => {
    expect((await d.fromProto({ int32_values: [1, 2] })).dtype).toBe('int32');
    // The reference answers np.empty(shape): a shape alone would allocate what it declares (a
    // 20-byte message asking for 16 GiB). Only an empty shape is taken; any other is a 400, nothing allocated.
    await expectClientError(d.fromProto({ shape: [2, 3] }), 400, /shape \(2, 3\) but no values/);
    await expectClientError(d.fromProto({ shape: [2_147_483_647] }), 400, /but no values/);
    expect((await d.fromProto({ shape: [2, 0] })).shape).toEqual([2, 0]);
    expect((await d.fromProto({})).shape).toEqual([0]);
    await expectClientError(
      d.fromProto({ int32_values: [1], float_values: [1] }),
      400,
      /^Array contents can only be one of given values key\. Use one of /,
    );
  });

  it('an unknown enum number is a BadInput', async () => {
    await expectClientError(d.fromProto({ dtype: 42 }), 400, '42 is invalid.');
  });

  it('validation runs after decoding', async () => {
    const strict = new NumpyNdarray({ shape: [3], enforce_shape: true });
    await expectClientError(strict.fromProto({ int32_values: [1, 2] }), 400, /shape "\(3,\)"/);
  });

  it('serialized_bytes needs a dtype and a whole number of items', async () => {
    await expectClientError(
      d.fromProto(new Uint8Array(8)),
      400,
      "'serialized_bytes' requires specifying 'dtype'.",
    );
    const f32 = new NumpyNdarray({ dtype: 'float32' });
    const raw = new Uint8Array(new Float32Array([1.5, -2]).buffer);
    expect((await f32.fromProto(raw)).toArray()).toEqual([1.5, -2]);
    // An unaligned view of the bytes (as inside a larger message buffer) works too.
    const padded = new Uint8Array(9);
    padded.set(raw, 1);
    expect((await f32.fromProto(padded.subarray(1))).toArray()).toEqual([1.5, -2]);
    await expectClientError(f32.fromProto(new Uint8Array(3)), 400, /not a multiple/);
    const i64 = new NumpyNdarray({ dtype: 'int64' });
    expect((await i64.fromProto(new Uint8Array(new BigInt64Array([2n ** 60n]).buffer))).data[0]).toBe(
      2n ** 60n,
    );
    const half = new NumpyNdarray({ dtype: 'float16' });
    expect((await half.fromProto(new Uint8Array([0x00, 0x3c, 0x00, 0xc0]))).toArray()).toEqual([1, -2]);
    await expectClientError(new NumpyNdarray({ dtype: 'str' }).fromProto(new Uint8Array(4)), 400);
  });

  it('toProto emits dtype, shape and the flattened values; int64 as decimal strings', async () => {
    expect(await d.toProto(NDArray.from([[1, 2]], 'int64'))).toEqual({
      dtype: 'DTYPE_INT64',
      shape: [1, 2],
      int64_values: ['1', '2'],
    });
    expect(await d.toProto(NDArray.from([true]))).toEqual({
      dtype: 'DTYPE_BOOL',
      shape: [1],
      bool_values: [true],
    });
    expect(await d.toProto(NDArray.from(['a']))).toEqual({
      dtype: 'DTYPE_STRING',
      shape: [1],
      string_values: ['a'],
    });
    await expectClientError(
      d.toProto(NDArray.from([1], 'int8')),
      400,
      "Unsupported dtype 'int8' for response message.",
    );
  });
});
