/**
 * What a server (or something that is not a Tiffin server) may send back: a table or series response in any
 * JSON shape, for every orient. The client returns rows/values or throws its own `protocol` error, never a
 * TypeError from inside its decoder.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { rowsFromTable, valuesFromSeries } from '../src/decode.js';
import { isTiffinClientError } from '../src/errors.js';

const ORIENTS = ['records', 'values', 'split', 'index', 'columns', 'table', 'nope'];

/** JSON values, and the shapes each orient expects with wrong things inside. */
const hostile = fc.oneof(
  fc.jsonValue({ maxDepth: 4 }),
  fc.constantFrom(
    [1, null, 'x'],
    [[1], null, 3],
    { columns: ['a'], data: [null, 3, 'x'] },
    { columns: null, data: [[1]] },
    { columns: [1, {}], data: [[1, 2]] },
    { a: null, b: { 0: 1 } },
    { a: 3 },
    { a: [1, 2] },
    { data: [null, 1, 'x'], schema: { primaryKey: 'index' } },
    { data: [{ values: 1 }], schema: null },
    { data: 'x' },
  ),
);

function outcome(fn: () => unknown): 'ok' | 'protocol' {
  try {
    expect(Array.isArray(fn())).toBe(true);
    return 'ok';
  } catch (err) {
    if (isTiffinClientError(err) && err.kind === 'protocol') return 'protocol';
    throw err;
  }
}

describe('decoding hostile table and series responses', () => {
  it('rowsFromTable: rows or a protocol error, for any JSON and any orient', () => {
    fc.assert(
      fc.property(hostile, fc.constantFrom(...ORIENTS), (value, orient) => {
        outcome(() => rowsFromTable(value, orient));
      }),
      { numRuns: 2000 },
    );
  });

  it('valuesFromSeries: values or a protocol error, for any JSON and any orient', () => {
    fc.assert(
      fc.property(hostile, fc.constantFrom(...ORIENTS), (value, orient) => {
        outcome(() => valuesFromSeries(value, orient));
      }),
      { numRuns: 2000 },
    );
  });
});
