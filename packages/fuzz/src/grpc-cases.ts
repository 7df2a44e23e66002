import type { RequestMessage } from '@tiffin/core';
import fc from 'fast-check';
import { encodeRequest, type RawMethod } from './grpc-raw.js';
import { modelInferCase } from './v2-cases.js';
import { type ByteCase, wireVariants } from './wire-variants.js';

const deepValue = (depth: number): unknown => {
  let v: unknown = { numberValue: 1 };
  for (let i = 0; i < depth; i++) v = { listValue: { values: [v] } };
  return v;
};

/** A pandas `Series` message: any of its value fields, one (as a client should send) or several. */
const seriesMessage = fc.record(
  {
    bool_values: fc.array(fc.boolean(), { maxLength: 6 }),
    float_values: fc.array(fc.float(), { maxLength: 6 }),
    int32_values: fc.array(fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }), { maxLength: 6 }),
    int64_values: fc.array(fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }).map(String), {
      maxLength: 6,
    }),
    string_values: fc.array(fc.string({ unit: 'binary', maxLength: 8 }), { maxLength: 6 }),
    double_values: fc.array(fc.double(), { maxLength: 6 }),
  },
  { requiredKeys: [] },
);

/** Messages that decode, aimed at the APIs with payloads that do not fit them. */
const wellFormed: fc.Arbitrary<RequestMessage> = fc.oneof(
  fc.record({
    api_name: fc.constantFrom(
      'json',
      'nd',
      'nd_strict',
      'text',
      'file',
      'multipart',
      'series',
      'frame',
      'image',
      'nope',
      '',
    ),
    ndarray: fc.record({
      dtype: fc.constantFrom('DTYPE_FLOAT', 'DTYPE_INT32', 'DTYPE_STRING', 'DTYPE_UNSPECIFIED', 'DTYPE_BOOL'),
      shape: fc.array(fc.integer({ min: -2, max: 5 }), { maxLength: 4 }),
      float_values: fc.array(fc.float(), { maxLength: 8 }),
      int32_values: fc.array(fc.integer({ min: -5, max: 5 }), { maxLength: 8 }),
    }),
  }) as fc.Arbitrary<RequestMessage>,
  // Declared sizes: a shape of up to 2^31 per dimension and no values, or few values.
  fc.record({
    api_name: fc.constantFrom('nd', 'frame', 'series'),
    ndarray: fc.record(
      {
        dtype: fc.constantFrom('DTYPE_FLOAT', 'DTYPE_DOUBLE', 'DTYPE_UNSPECIFIED'),
        shape: fc.array(fc.integer({ min: 0, max: 2 ** 31 - 1 }), { minLength: 1, maxLength: 3 }),
        double_values: fc.array(fc.double(), { maxLength: 2 }),
      },
      { requiredKeys: ['shape'] },
    ),
  }) as fc.Arbitrary<RequestMessage>,
  fc.record({
    api_name: fc.constantFrom('json', 'text', 'nd', 'series'),
    // protobufjs's own encoder refuses deeper objects; deeper bytes come from `deepJsonBytes`.
    json: fc.integer({ min: 0, max: 20 }).map(deepValue),
  }) as fc.Arbitrary<RequestMessage>,
  fc.record({
    api_name: fc.constantFrom('file', 'image', 'text', 'json', 'multipart'),
    file: fc.record({
      kind: fc.constantFrom('image/png', 'text/csv', '', 'x'),
      content: fc.uint8Array({ maxLength: 64 }).map((b) => Buffer.from(b)),
    }),
  }) as fc.Arbitrary<RequestMessage>,
  fc.record({
    api_name: fc.constantFrom('series', 'frame', 'nd', 'json'),
    series: seriesMessage,
  }) as fc.Arbitrary<RequestMessage>,
  fc.record({
    api_name: fc.constantFrom('frame', 'frame_parquet', 'series', 'nd'),
    dataframe: fc.record(
      {
        column_names: fc.array(fc.string({ unit: 'binary', maxLength: 6 }), { maxLength: 4 }),
        columns: fc.array(seriesMessage, { maxLength: 4 }),
      },
      { requiredKeys: [] },
    ),
  }) as fc.Arbitrary<RequestMessage>,
  fc.record({
    api_name: fc.constantFrom('text', 'json', 'nd', 'file', 'series'),
    text: fc.record({
      value: fc.oneof(fc.string({ unit: 'binary', maxLength: 64 }), fc.constant('{"a":[1,2]}')),
    }),
  }) as fc.Arbitrary<RequestMessage>,
  fc.record({
    api_name: fc.constantFrom('text', 'json', 'nd'),
    serialized_bytes: fc.uint8Array({ maxLength: 64 }).map((b) => Buffer.from(b)),
  }) as fc.Arbitrary<RequestMessage>,
  fc.record({
    api_name: fc.constantFrom('multipart', 'json'),
    multipart: fc.record({
      fields: fc.dictionary(
        fc.constantFrom('meta', 'doc', 'note', 'x'),
        fc.oneof(
          fc.record({ json: fc.constant({ numberValue: 1 }) }),
          fc.record({ text: fc.record({ value: fc.string() }) }),
          fc.record({ file: fc.record({ content: fc.constant(Buffer.from('x')) }) }),
          fc.constant({}),
        ),
      ),
    }),
  }) as fc.Arbitrary<RequestMessage>,
);

function lengthDelimited(tag: number, body: Buffer): Buffer {
  const len: number[] = [];
  let n = body.length;
  do {
    len.push((n & 0x7f) | (n > 0x7f ? 0x80 : 0));
    n >>>= 7;
  } while (n > 0);
  return Buffer.concat([Buffer.from([tag, ...len]), body]);
}

/** `Request{ api_name, json: [[[…1…]]] }` nested `depth` lists deep, written as protobuf wire bytes. */
function deepJsonBytes(apiName: string, depth: number): Buffer {
  let value: Buffer = Buffer.from([0x11, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f]); // Value{number_value: 1}
  for (let i = 0; i < depth; i++) value = lengthDelimited(0x32, lengthDelimited(0x0a, value)); // Value{list_value{values}}
  return Buffer.concat([lengthDelimited(0x0a, Buffer.from(apiName)), lengthDelimited(0x4a, value)]);
}

/** `Call` request bytes: well-formed, truncated, mutated, or random. */
const callCase: fc.Arbitrary<ByteCase> = fc.oneof(
  wireVariants(wellFormed, encodeRequest, 'grpc'),
  fc.uint8Array({ maxLength: 256 }).map((b) => ({ kind: 'grpc/random', bytes: Buffer.from(b) })),
  fc
    .tuple(fc.constantFrom('json', 'nd', 'text'), fc.integer({ min: 100, max: 5000 }))
    .map(([api, depth]) => ({ kind: 'grpc/deep-json', bytes: deepJsonBytes(api, depth) })),
);

/** A gRPC case: `Call` bytes most of the time, `ModelInfer` bytes (Open Inference Protocol) otherwise. */
export const grpcCase: fc.Arbitrary<{ kind: string; bytes: Buffer; method: RawMethod }> = fc.oneof(
  { weight: 3, arbitrary: callCase.map((c) => ({ ...c, method: 'Call' as const })) },
  { weight: 1, arbitrary: modelInferCase.map((c) => ({ ...c, method: 'ModelInfer' as const })) },
);
