// The task module of the table-decoding threads (see decode-off-thread.ts): started as a worker, never imported.
import { serveTasksInThread, Transferring } from '@tiffin/core/descriptor';
import { type Dtype, dtypeKind } from '../table/dtype.js';
import type { Table } from '../table/table.js';
import { type DecodedSeries, decodeSeries, type SeriesDecoding } from './decode-series.js';
import { decodeTable, type TableDecoding } from './decode-table.js';
import { type PackedSeries, type PackedTable, packValues } from './packed-table.js';

const isNumeric = (dtype: Dtype) => ['int', 'uint', 'float'].includes(dtypeKind(dtype));

/** The buffers of the packed columns, to move. */
const buffersOf = (columns: Array<unknown[] | Float64Array>): ArrayBuffer[] =>
  columns.flatMap((c) => (c instanceof Float64Array ? [c.buffer as ArrayBuffer] : []));

/** Columns of plain numbers travel as Float64Arrays, moved, not copied: cloning 4 M JS numbers costs ~0.5 s. */
function packTable(table: Table): Transferring<PackedTable> {
  const data = table.data.map((values, c) => packValues(values, isNumeric(table.dtypes[c]!)));
  return new Transferring({ ...table, data }, buffersOf(data));
}

function packSeries(series: DecodedSeries): Transferring<PackedSeries> {
  const values = packValues(series.values, isNumeric(series.dtype));
  return new Transferring({ ...series, values }, buffersOf([values]));
}

const asBuffer = (body: Uint8Array) => Buffer.from(body.buffer, body.byteOffset, body.byteLength);

serveTasksInThread({
  decodeTable: async (body: Uint8Array, how: TableDecoding) =>
    packTable(await decodeTable(asBuffer(body), how)),
  decodeSeries: (body: Uint8Array, how: SeriesDecoding) => packSeries(decodeSeries(asBuffer(body), how)),
});
