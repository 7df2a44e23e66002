import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ndarrayRequestDeserializer } from '../../src/grpc/ndarray-request.js';
import { inferenceServiceDefinition, loadProtocol } from '../../src/grpc/proto.js';

const call = inferenceServiceDefinition().Call!;
const protobufjs = call.requestDeserialize as (bytes: Buffer) => unknown;
const encode = call.requestSerialize as (message: unknown) => Buffer;
let fallbacks = 0;
const fast = ndarrayRequestDeserializer(loadProtocol(), (bytes) => {
  fallbacks++;
  return protobufjs(bytes);
});

/** What each gives for the bytes: the value, or the error message when it throws. */
function outcome(read: (bytes: Buffer) => unknown, bytes: Buffer): unknown {
  try {
    return { value: read(bytes) };
  } catch (err) {
    return { error: (err as Error).message };
  }
}

const DTYPES = ['DTYPE_FLOAT', 'DTYPE_DOUBLE', 'DTYPE_UNSPECIFIED', 'DTYPE_INT32'];
const float = fc.oneof(
  fc.double(),
  fc.constantFrom(0, -0, Number.NaN, Number.NEGATIVE_INFINITY, 1e-45, 5e-324),
);
const request = fc.record(
  {
    api_name: fc.string({ maxLength: 12 }),
    ndarray: fc.record(
      {
        dtype: fc.constantFrom(...DTYPES),
        shape: fc.array(fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }), { maxLength: 4 }),
        values: fc.tuple(
          fc.constantFrom('double_values', 'float_values'),
          fc.array(float, { maxLength: 200 }),
        ),
      },
      { requiredKeys: [] },
    ),
  },
  { requiredKeys: ['ndarray'] },
);

function message(r: {
  api_name?: string;
  ndarray: { dtype?: string; shape?: number[]; values?: [string, number[]] };
}) {
  const nd: Record<string, unknown> = {};
  if (r.ndarray.dtype !== undefined) nd.dtype = r.ndarray.dtype;
  if (r.ndarray.shape !== undefined) nd.shape = r.ndarray.shape;
  if (r.ndarray.values) nd[r.ndarray.values[0]] = r.ndarray.values[1];
  return { ...(r.api_name === undefined ? {} : { api_name: r.api_name }), ndarray: nd };
}

describe('the NDArray request deserializer', () => {
  it('reads float and double NDArray requests as proto-loader does, without falling back', () => {
    fc.assert(
      fc.property(request, (r) => {
        const bytes = encode(message(r));
        const before = fallbacks;
        expect(fast(bytes)).toEqual(protobufjs(bytes));
        expect(fallbacks).toBe(before);
      }),
      { numRuns: 500 },
    );
  });

  it('gives what protobufjs gives (value or error) for truncated and mutated bytes', () => {
    fc.assert(
      fc.property(
        request,
        fc.nat(),
        fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { maxLength: 4 }),
        (r, cut, flips) => {
          const bytes = Buffer.from(encode(message(r)));
          for (const [at, value] of flips) if (bytes.length > 0) bytes[at % bytes.length] = value;
          const hostile = bytes.subarray(0, cut % (bytes.length + 1));
          expect(outcome(fast, hostile)).toEqual(outcome(protobufjs, hostile));
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('leaves every other request to protobufjs', () => {
    const others = [
      { api_name: 'a', text: { value: 'hi' } },
      { api_name: 'a', ndarray: { dtype: 'DTYPE_INT32', int32_values: [1, 2] } },
      { api_name: 'a', ndarray: { dtype: 'DTYPE_STRING', string_values: ['x'] } },
      { api_name: 'a', serialized_bytes: Buffer.from('x') },
    ];
    for (const m of others) {
      const bytes = encode(m);
      const before = fallbacks;
      expect(fast(bytes)).toEqual(protobufjs(bytes));
      expect(fallbacks).toBe(before + 1);
    }
    // Repeated fields follow protobuf's merge rules (protobufjs): a second api_name wins.
    const twice = Buffer.concat([encode({ api_name: 'first' }), encode({ api_name: 'second', ndarray: {} })]);
    expect(fast(twice)).toEqual(protobufjs(twice));
  });
});
