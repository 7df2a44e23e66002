import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ndarrayResponseSerializer } from '../../src/grpc/ndarray-response.js';
import { inferenceServiceDefinition, loadProtocol } from '../../src/grpc/proto.js';

const protobufjs = inferenceServiceDefinition().Call!.responseSerialize as (response: unknown) => Buffer;
let fallbacks = 0;
const fast = ndarrayResponseSerializer(loadProtocol(), (response) => {
  fallbacks++;
  return protobufjs(response);
});

const DTYPES = ['DTYPE_FLOAT', 'DTYPE_DOUBLE', 'DTYPE_UNSPECIFIED', 'DTYPE_INT32', 'DTYPE_STRING'];
const float = fc.oneof(
  fc.double(),
  fc.constantFrom(0, -0, Number.NaN, Number.POSITIVE_INFINITY, -1e308, 3.4e38, 1e-45, 5e-324),
);
const ndarray = fc.record(
  {
    dtype: fc.oneof(fc.constantFrom(...DTYPES), fc.integer({ min: 0, max: 8 })),
    shape: fc.array(fc.oneof(fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }), fc.nat({ max: 300 })), {
      maxLength: 5,
    }),
    values: fc.tuple(fc.constantFrom('double_values', 'float_values'), fc.array(float, { maxLength: 300 })),
  },
  { requiredKeys: [] },
);

describe('the NDArray response serializer', () => {
  it('writes the bytes protobufjs writes, for any float or double NDArray', () => {
    fc.assert(
      fc.property(ndarray, ({ dtype, shape, values }) => {
        const nd: Record<string, unknown> = {};
        if (dtype !== undefined) nd.dtype = dtype;
        if (shape !== undefined) nd.shape = shape;
        if (values) nd[values[0]] = values[1];
        const response = { content: 'ndarray', ndarray: nd };
        const before = fallbacks;
        const bytes = fast(response);
        expect(fallbacks).toBe(before);
        expect(Buffer.from(bytes).toString('hex')).toBe(Buffer.from(protobufjs(response)).toString('hex'));
      }),
      { numRuns: 500 },
    );
  });

  it('writes a 100k-double answer as one copy of its bytes, equal to protobufjs', () => {
    const values = Array.from({ length: 100_000 }, (_, i) => Math.sin(i) * 1e6);
    const response = {
      content: 'ndarray',
      ndarray: { dtype: 'DTYPE_DOUBLE', shape: [100, 1000], double_values: values },
    };
    expect(Buffer.compare(fast(response), protobufjs(response))).toBe(0);
  });

  it('hands every other response to protobufjs', () => {
    const others: unknown[] = [
      { content: 'text', text: { value: 'hi' } },
      { content: 'ndarray', ndarray: { dtype: 'DTYPE_INT32', shape: [2], int32_values: [1, 2] } },
      { content: 'ndarray', ndarray: { dtype: 'DTYPE_STRING', string_values: ['a'] } },
      { content: 'ndarray', ndarray: { double_values: [1], float_values: [2] } },
      { content: 'ndarray', ndarray: { dtype: 'NOT_A_DTYPE', double_values: [1] } },
    ];
    for (const response of others) {
      const before = fallbacks;
      expect(Buffer.compare(fast(response), protobufjs(response))).toBe(0);
      expect(fallbacks).toBe(before + 1);
    }
  });
});
