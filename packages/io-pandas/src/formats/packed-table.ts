import type { Table } from '../table/table.js';
import type { DecodedSeries } from './decode-series.js';

/** A table as it crosses from a decoding thread: numeric columns packed in Float64Arrays. */
export type PackedTable = Omit<Table, 'data'> & { data: Array<unknown[] | Float64Array> };

/** A Series as it crosses from a decoding thread: numeric values packed in a Float64Array. */
export type PackedSeries = Omit<DecodedSeries, 'values'> & { values: unknown[] | Float64Array };

/** Plain numbers of a numeric dtype kind as a Float64Array (moved across threads), else the values as they are. */
export function packValues(values: unknown[], numeric: boolean): unknown[] | Float64Array {
  if (!numeric || !values.every((v) => typeof v === 'number')) return values;
  return Float64Array.from(values as number[]);
}

/** Values handled between two turns of the event loop, so that other requests are served in between. */
const SLICE = 65_536;

export const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Back to a JS array, a slice at a time. */
export async function unpackValues(column: unknown[] | Float64Array): Promise<unknown[]> {
  if (Array.isArray(column)) return column;
  const values: unknown[] = new Array(column.length);
  for (let start = 0; start < column.length; start += SLICE) {
    if (start > 0) await nextTurn();
    const stop = Math.min(column.length, start + SLICE);
    for (let i = start; i < stop; i++) values[i] = column[i];
  }
  return values;
}

/** Back to a Table (JS arrays), a slice at a time. */
export async function unpackTable(packed: PackedTable): Promise<Table> {
  const data: unknown[][] = [];
  for (const column of packed.data) data.push(await unpackValues(column));
  return { ...packed, data };
}
