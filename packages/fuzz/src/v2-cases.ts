import type { ModelInferRequestMessage } from '@tiffin/core/internal';
import { inferenceV2ServiceDefinition } from '@tiffin/core/internal';
import fc from 'fast-check';
import type { Payload } from './bodies.js';
import { type ByteCase, wireVariants } from './wire-variants.js';

/**
 * Hostile Open Inference Protocol (KServe v2) requests: `POST /v2/models/<name>/infer` bodies (JSON and the
 * binary tensor extension) and `inference.GRPCInferenceService/ModelInfer` messages, aimed at every model of
 * the fuzz service and at names it does not have.
 */

/** Models of the fuzz service (the APIs with a tensor form), plus ones it lacks. */
const MODELS = ['nd', 'nd_strict', 'json', 'text', 'series', 'frame', 'file', 'image', 'nope', ''] as const;
const DATATYPES = [
  'BOOL',
  'UINT8',
  'INT8',
  'INT32',
  'INT64',
  'UINT64',
  'FP16',
  'FP32',
  'FP64',
  'BYTES',
  'fp32',
  'COMPLEX',
  '',
];

const shape = fc.oneof(
  { weight: 4, arbitrary: fc.array(fc.integer({ min: 0, max: 4 }), { minLength: 1, maxLength: 3 }) },
  { weight: 1, arbitrary: fc.array(fc.integer({ min: -3, max: 2 ** 31 }), { maxLength: 40 }) },
  { weight: 1, arbitrary: fc.constant([2 ** 53, 2 ** 53]) },
);

const element = fc.oneof(
  fc.double(),
  fc.integer(),
  fc.boolean(),
  fc.string({ maxLength: 8 }),
  fc.constant(null),
  fc.constant([1, [2, [3]]]),
);

/** A tensor as JSON: consistent with its shape now and then, wrong in any field the rest of the time. */
const jsonTensor = fc.record(
  {
    name: fc.oneof(fc.constantFrom('input', 'x', ''), fc.string({ unit: 'binary', maxLength: 12 })),
    datatype: fc.oneof(
      { weight: 5, arbitrary: fc.constantFrom(...DATATYPES) },
      { weight: 1, arbitrary: fc.anything() },
    ),
    shape: fc.oneof({ weight: 5, arbitrary: shape }, { weight: 1, arbitrary: fc.anything() }),
    data: fc.oneof(
      fc.array(element, { maxLength: 16 }),
      fc.array(fc.array(fc.double(), { maxLength: 4 }), { maxLength: 4 }),
      fc.anything(),
    ),
    parameters: fc.oneof(
      fc.constant({}),
      fc.record({ binary_data_size: fc.oneof(fc.integer({ min: -8, max: 1 << 20 }), fc.anything()) }),
      fc.anything(),
    ),
  },
  { requiredKeys: [] },
);

/** A tensor that is right for its own datatype and shape (the model may still refuse it). */
const consistentTensor = fc
  .tuple(
    fc.constantFrom('FP32', 'FP64', 'INT32', 'INT64', 'BOOL', 'BYTES'),
    fc.integer({ min: 0, max: 3 }),
    fc.integer({ min: 1, max: 3 }),
  )
  .chain(([datatype, rows, cols]) => {
    const n = rows * cols;
    const item =
      datatype === 'BOOL'
        ? fc.boolean()
        : datatype === 'BYTES'
          ? fc.string({ maxLength: 6 })
          : datatype.startsWith('FP')
            ? fc.double({ noNaN: true, noDefaultInfinity: true })
            : fc.integer({ min: -1000, max: 1000 });
    return fc.record({
      name: fc.constant('input'),
      datatype: fc.constant(datatype),
      shape: fc.constant([rows, cols]),
      data: fc.array(item as fc.Arbitrary<unknown>, { minLength: n, maxLength: n }),
    });
  });

const inferBody = fc.record(
  {
    id: fc.string({ maxLength: 10 }),
    inputs: fc.oneof(
      { weight: 6, arbitrary: fc.array(jsonTensor, { maxLength: 4 }) },
      // Requests that reach the model's function (or its descriptor's own checks), not only the envelope's.
      { weight: 3, arbitrary: fc.array(consistentTensor, { minLength: 1, maxLength: 2 }) },
      { weight: 1, arbitrary: fc.anything() },
    ),
    outputs: fc.oneof(
      fc.array(
        fc.record({
          name: fc.constantFrom('output', 'nope'),
          parameters: fc.record({ binary_data: fc.boolean() }),
        }),
        {
          maxLength: 3,
        },
      ),
      fc.anything(),
    ),
    parameters: fc.oneof(fc.record({ binary_data_output: fc.boolean() }), fc.anything()),
  },
  { requiredKeys: ['inputs'] },
);

/** One v2 HTTP request: path, body, and the extra header lines the binary extension adds. */
export interface InferHttpCase {
  path: string;
  payload: Payload;
  headers: Array<[string, string]>;
}

const jsonCase: fc.Arbitrary<Omit<InferHttpCase, 'path'>> = inferBody.map((body) => ({
  payload: {
    kind: 'v2/json',
    contentType: 'application/json',
    body: Buffer.from(JSON.stringify(body) ?? 'null'),
  },
  headers: [],
}));

/** The binary extension: a JSON header, raw bytes after it, and a header length that may lie. */
const binaryCase: fc.Arbitrary<Omit<InferHttpCase, 'path'>> = fc
  .tuple(
    inferBody,
    fc.uint8Array({ maxLength: 256 }),
    fc.oneof(
      { weight: 4, arbitrary: fc.constant('exact') },
      { weight: 1, arbitrary: fc.constantFrom('-1', '0', '99999999', '1e3', 'abc', '', ' 12', '0x10') },
      { weight: 1, arbitrary: fc.nat({ max: 600 }).map(String) },
    ),
  )
  .map(([body, raw, length]) => {
    const header = Buffer.from(JSON.stringify(body) ?? 'null');
    return {
      payload: {
        kind: 'v2/binary',
        contentType: 'application/octet-stream',
        body: Buffer.concat([header, Buffer.from(raw)]),
      },
      headers: [['inference-header-content-length', length === 'exact' ? String(header.length) : length]],
    };
  });

const garbageCase: fc.Arbitrary<Omit<InferHttpCase, 'path'>> = fc
  .tuple(
    fc.uint8Array({ maxLength: 300 }),
    fc.constantFrom('application/json', 'application/octet-stream', 'text/plain'),
  )
  .map(([bytes, contentType]) => ({
    payload: { kind: 'v2/garbage', contentType, body: Buffer.from(bytes) },
    headers: [],
  }));

export const inferHttpCase: fc.Arbitrary<InferHttpCase> = fc
  .tuple(
    fc.oneof(
      { weight: 9, arbitrary: fc.constantFrom(...MODELS).map((m) => `/v2/models/${m}/infer`) },
      {
        weight: 1,
        arbitrary: fc.constantFrom(
          '/v2/models/nd/versions/1/infer',
          '/v2/models/%ff/infer',
          '/v2/models//infer',
        ),
      },
    ),
    fc.oneof(
      { weight: 4, arbitrary: jsonCase },
      { weight: 3, arbitrary: binaryCase },
      { weight: 1, arbitrary: garbageCase },
    ),
  )
  .map(([path, c]) => ({ path, ...c }));

// --- gRPC ModelInfer ---

const contents = fc.record(
  {
    fp32_contents: fc.array(fc.float(), { maxLength: 8 }),
    fp64_contents: fc.array(fc.double(), { maxLength: 8 }),
    int_contents: fc.array(fc.integer(), { maxLength: 8 }),
    int64_contents: fc.array(fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }).map(String), {
      maxLength: 4,
    }),
    bool_contents: fc.array(fc.boolean(), { maxLength: 8 }),
    bytes_contents: fc.array(
      fc.uint8Array({ maxLength: 16 }).map((b) => Buffer.from(b)),
      { maxLength: 4 },
    ),
  },
  { requiredKeys: [] },
);

const inferMessage: fc.Arbitrary<ModelInferRequestMessage> = fc.record(
  {
    model_name: fc.constantFrom(...MODELS),
    id: fc.string({ maxLength: 8 }),
    inputs: fc.array(
      fc.record(
        {
          name: fc.constantFrom('input', 'x', ''),
          datatype: fc.constantFrom(...DATATYPES),
          shape: fc.array(fc.integer({ min: -2, max: 6 }), { maxLength: 4 }),
          contents,
        },
        { requiredKeys: ['datatype'] },
      ),
      { maxLength: 3 },
    ),
    outputs: fc.array(fc.record({ name: fc.constantFrom('output', 'nope') }), { maxLength: 2 }),
    raw_input_contents: fc.array(
      fc.uint8Array({ maxLength: 64 }).map((b) => Buffer.from(b)),
      { maxLength: 3 },
    ),
  },
  { requiredKeys: ['model_name'] },
);

const encodeInfer = (m: ModelInferRequestMessage): Buffer =>
  inferenceV2ServiceDefinition().ModelInfer!.requestSerialize(m);

/** ModelInfer request bytes: well-formed (mostly wrong for the model), truncated, mutated. */
export const modelInferCase: fc.Arbitrary<ByteCase> = wireVariants(inferMessage, encodeInfer, 'grpc-v2');
