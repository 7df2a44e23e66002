import { siblingModule, TaskPool } from '@tiffin/core/descriptor';
import { loadDanfo } from '../danfo/load.js';
import type { Table } from '../table/table.js';
import type { DecodedSeries, SeriesDecoding } from './decode-series.js';
import type { TableDecoding } from './decode-table.js';
import { type PackedSeries, type PackedTable, unpackTable, unpackValues } from './packed-table.js';

let pool: TaskPool | undefined;

function tableThreads(): TaskPool {
  pool ??= new TaskPool({ name: 'Table decoding', module: siblingModule(import.meta.url, 'table-thread') });
  return pool;
}

/**
 * Import danfo (about a second of loading on the calling thread) and start the decoding threads: what the
 * descriptors' `prepare` does at startup, so the first table body does not hold the event loop for it.
 */
export async function prepareTables(): Promise<void> {
  tableThreads().start();
  await loadDanfo();
}

/**
 * Decode a table in a worker thread: parsing 4 M cells of Parquet, CSV or JSON held the event loop
 * for over a second. The body is copied there; numeric columns come back moved and are unpacked in slices.
 */
export async function decodeTableOffThread(body: Buffer, how: TableDecoding): Promise<Table> {
  return unpackTable(await tableThreads().run<PackedTable>('decodeTable', [body, how]));
}

/** A Series body decoded in the same threads; numeric values come back moved and are unpacked in slices. */
export async function decodeSeriesOffThread(body: Buffer, how: SeriesDecoding): Promise<DecodedSeries> {
  const packed = await tableThreads().run<PackedSeries>('decodeSeries', [body, how]);
  return { ...packed, values: await unpackValues(packed.values) };
}
