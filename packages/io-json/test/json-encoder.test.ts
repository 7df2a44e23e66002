import {
  defaultJsonEncoder,
  JSON as JSONDescriptor,
  type JsonEncoder,
  NDArray,
  registerJsonEncoder,
} from '@tiffin/core';
import { describe, expect, it } from 'vitest';
import '../src/index.js';
import { bodyText } from './helpers/request.js';

class Reading {
  constructor(
    readonly sensor: string,
    readonly values: Float32Array,
  ) {}
}

/** Stands in for a DataFrame: io-pandas registers its real types through the same seam. */
class FakeTable {
  constructor(readonly columns: Record<string, number[]>) {}
}

async function encoded(descriptor: JSONDescriptor, value: unknown): Promise<unknown> {
  const response = await descriptor.toHttpResponse(value, null);
  expect(response.headers).toContainEqual(['content-type', 'application/json']);
  return JSON.parse(await bodyText(response));
}

describe('JSON output encoding', () => {
  it('the default encoder writes NDArray, Map, Set, Date, BigInt, typed arrays and class instances', async () => {
    const value = {
      arr: NDArray.from([
        [1, 2],
        [3, 4],
      ]),
      map: new Map<string, number>([['a', 1]]),
      set: new Set(['x', 'y']),
      at: new Date('2024-05-06T07:08:09.000Z'),
      small: 42n,
      huge: 12345678901234567890n,
      bytes: new Uint8Array([1, 2]),
      reading: new Reading('t1', new Float32Array([0.5])),
    };
    expect(await encoded(new JSONDescriptor(), value)).toEqual({
      arr: [
        [1, 2],
        [3, 4],
      ],
      map: { a: 1 },
      set: ['x', 'y'],
      at: '2024-05-06T07:08:09.000Z',
      small: 42,
      huge: '12345678901234567890',
      bytes: [1, 2],
      reading: { sensor: 't1', values: [0.5] },
    });
  });

  it('encodes types another package registered through core (how io-pandas adds DataFrame)', async () => {
    registerJsonEncoder({
      name: 'test.FakeTable',
      test: (v) => v instanceof FakeTable,
      encode: (v) => (v as FakeTable).columns,
    });
    expect(await encoded(new JSONDescriptor(), { table: new FakeTable({ a: [1, 2] }) })).toEqual({
      table: { a: [1, 2] },
    });
  });

  it('a custom encoder can handle its own types and delegate the rest to the default one', async () => {
    // The pattern docs/json-encoders.md describes: convert what you own, hand everything else on.
    const encoder: JsonEncoder = (value) =>
      defaultJsonEncoder(value instanceof Reading ? { id: value.sensor, n: value.values.length } : value);
    const descriptor = new JSONDescriptor({ json_encoder: encoder });
    expect(await encoded(descriptor, new Reading('t2', new Float32Array(3)))).toEqual({ id: 't2', n: 3 });
    expect(await encoded(descriptor, { at: new Date(0), s: new Set([1]) })).toEqual({
      at: '1970-01-01T00:00:00.000Z',
      s: [1],
    });
    expect(descriptor.toSpec().args).toEqual({ has_pydantic_model: false, has_json_encoder: true });
  });

  it('answers a null result with an empty JSON body', async () => {
    const response = await new JSONDescriptor().toHttpResponse(null, null);
    expect(await bodyText(response)).toBe('');
  });
});
