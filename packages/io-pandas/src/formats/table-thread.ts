// The task module of the table-decoding threads (see decode-off-thread.ts): started as a worker, never imported.
import { serveTasksInThread, Transferring } from '@tiffin/core/internal';
import { dtypeKind } from '../table/dtype.js';
import { decodeTable, type TableDecoding } from './decode-table.js';
import type { PackedTable } from './packed-table.js';

/** Columns of plain numbers travel as Float64Arrays, moved, not copied: cloning 4 M JS numbers costs ~0.5 s. */
function packTable(table: Awaited<ReturnType<typeof decodeTable>>): Transferring<PackedTable> {
  const transfer: ArrayBuffer[] = [];
  const data = table.data.map((values, c) => {
    const kind = dtypeKind(table.dtypes[c]!);
    if (kind !== 'int' && kind !== 'uint' && kind !== 'float') return values;
    if (!values.every((v) => typeof v === 'number')) return values;
    const packed = Float64Array.from(values as number[]);
    transfer.push(packed.buffer);
    return packed;
  });
  return new Transferring({ ...table, data }, transfer);
}

serveTasksInThread({
  decodeTable: async (body: Uint8Array, how: TableDecoding) =>
    packTable(await decodeTable(Buffer.from(body.buffer, body.byteOffset, body.byteLength), how)),
});
