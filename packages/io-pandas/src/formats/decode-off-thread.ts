import { siblingModule, TaskPool } from '@tiffin/core/internal';
import type { Table } from '../table/table.js';
import type { TableDecoding } from './decode-table.js';
import { type PackedTable, unpackTable } from './packed-table.js';

let pool: TaskPool | undefined;

/**
 * Decode a table in a worker thread (issue 32): parsing 4 M cells of Parquet, CSV or JSON held the event loop
 * for over a second. The body is copied there; numeric columns come back moved and are unpacked in slices.
 */
export async function decodeTableOffThread(body: Buffer, how: TableDecoding): Promise<Table> {
  pool ??= new TaskPool({ name: 'Table decoding', module: siblingModule(import.meta.url, 'table-thread') });
  return unpackTable(await pool.run<PackedTable>('decodeTable', [body, how]));
}
