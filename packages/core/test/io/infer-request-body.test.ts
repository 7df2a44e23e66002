import { describe, expect, it } from 'vitest';
import { readInferRequest } from '../../src/io/infer-request-body.js';
import { OFF_LOOP_BODY_BYTES } from '../../src/io/json-threads.js';
import { type InferRequest, parseInferRequest } from '../../src/wire/v2/infer-request.js';

// Open Inference Protocol bodies whose JSON part is large are read in a JSON thread: what comes back is what
// the same parser gives on the event loop, arrays and refusals alike.

const plain = (request: InferRequest) => ({
  ...request,
  inputs: request.inputs.map((t) => ({
    name: t.name,
    dtype: t.array.dtype,
    shape: [...t.array.shape],
    data: Array.from(t.array.data as ArrayLike<unknown>, (v) => (typeof v === 'bigint' ? String(v) : v)),
  })),
});

/** A body of JSON tensors (floats, 64-bit integers, strings) over `OFF_LOOP_BODY_BYTES`, and two binary ones. */
function largeBody(): { body: Buffer; headerLength: string } {
  const floats = Array.from({ length: 200_000 }, (_, i) => (i % 1000) / 8);
  const binaryA = new Float32Array([1.5, -2, 3.25]);
  const binaryB = new Int32Array([7, 8]);
  const json = Buffer.from(
    JSON.stringify({
      id: 'large',
      parameters: { binary_data_output: false },
      inputs: [
        { name: 'x', datatype: 'FP32', shape: [1000, 200], data: floats },
        { name: 'ids', datatype: 'INT64', shape: [2], data: [1234, -3] },
        { name: 'words', datatype: 'BYTES', shape: [2], data: ['héllo', 'wörld'] },
        { name: 'a', datatype: 'FP32', shape: [3], parameters: { binary_data_size: 12 } },
        { name: 'b', datatype: 'INT32', shape: [2], parameters: { binary_data_size: 8 } },
      ],
      outputs: [{ name: 'y' }],
    }),
  );
  expect(json.byteLength).toBeGreaterThan(OFF_LOOP_BODY_BYTES);
  const body = Buffer.concat([json, Buffer.from(binaryA.buffer), Buffer.from(binaryB.buffer)]);
  return { body, headerLength: String(json.byteLength) };
}

describe('readInferRequest', () => {
  it('reads a large body in a JSON thread into the arrays the event loop would read', async () => {
    const { body, headerLength } = largeBody();
    const offLoop = await readInferRequest(body, headerLength, 512);
    const onLoop = parseInferRequest(body, headerLength, 512);
    expect(plain(offLoop)).toEqual(plain(onLoop));
    expect(offLoop.inputs.map((t) => t.name)).toEqual(['x', 'ids', 'words', 'a', 'b']);
    expect(Array.from(offLoop.inputs[3]!.array.data as Float32Array)).toEqual([1.5, -2, 3.25]);
    expect(offLoop.inputs[0]!.array.data).toBeInstanceOf(Float32Array);
    expect(Array.from(offLoop.inputs[1]!.array.data as BigInt64Array)).toEqual([1234n, -3n]);
  });

  it('refuses a large malformed body from the thread with the 400 the loop would give', async () => {
    const data = Array.from({ length: 300_000 }, (_, i) => i / 7);
    const body = Buffer.from(
      JSON.stringify({ inputs: [{ name: 'x', datatype: 'FP32', shape: [1, 3], data }] }),
    );
    expect(body.byteLength).toBeGreaterThan(OFF_LOOP_BODY_BYTES);
    let onLoop: unknown;
    try {
      parseInferRequest(body, undefined, 512);
    } catch (err) {
      onLoop = err;
    }
    await expect(readInferRequest(body, undefined, 512)).rejects.toMatchObject({
      name: 'BadInput',
      code: 'BAD_INPUT',
      message: (onLoop as Error).message,
    });
    // Truncated JSON, and a header length past the body, are 400s too.
    await expect(readInferRequest(body.subarray(0, body.length - 10), undefined, 512)).rejects.toMatchObject({
      code: 'BAD_INPUT',
    });
    await expect(readInferRequest(body, String(body.length + 1), 512)).rejects.toMatchObject({
      code: 'BAD_INPUT',
    });
  });
});
