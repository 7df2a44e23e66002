import type { Table } from '../table/table.js';

/** A table as it crosses from a decoding thread: numeric columns packed in Float64Arrays. */
export type PackedTable = Omit<Table, 'data'> & { data: Array<unknown[] | Float64Array> };

/** Values handled between two turns of the event loop, so that other requests are served in between. */
const SLICE = 65_536;

export const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Back to a Table (JS arrays), a slice at a time. */
export async function unpackTable(packed: PackedTable): Promise<Table> {
  const data: unknown[][] = [];
  for (const column of packed.data) {
    if (Array.isArray(column)) {
      data.push(column);
      continue;
    }
    const values: unknown[] = new Array(column.length);
    for (let start = 0; start < column.length; start += SLICE) {
      if (start > 0) await nextTurn();
      const stop = Math.min(column.length, start + SLICE);
      for (let i = start; i < stop; i++) values[i] = column[i];
    }
    data.push(values);
  }
  return { ...packed, data };
}
