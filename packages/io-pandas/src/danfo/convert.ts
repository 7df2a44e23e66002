import { BadInput } from '@tiffin/core';
import { nextTurn } from '../formats/packed-table.js';
import { fromDanfoDtype, toDanfoDtype } from '../table/dtype.js';
import { type Label, rowCount, type Table } from '../table/table.js';
import type { FrameView, SeriesView } from '../table/view.js';
import type { Danfo, DataFrame, Series } from './load.js';

/** The parts of danfo's NDframe that `frameFromRows` sets up itself (danfojs-node 1.2.0, pinned). */
interface NdframeInternals {
  $dataIncolumnFormat: unknown[][];
  $config: { setIsLowMemoryMode(on: boolean): void };
}

/**
 * A danfo DataFrame of `rows`, whose columns are `table.data`. danfo would transpose the rows back into columns
 * (a second copy, ~70% of its constructor's time); the table already has them, so the frame is built in
 * low-memory mode (no copy) and then given the table's columns, as the normal mode would hold them.
 * danfo's own complaints (duplicate labels, ...) are the client's input.
 */
function frameFromRows(dfd: Danfo, rows: unknown[][], table: Table, owner: string): DataFrame {
  const handOver = rows.length > 0 && table.data.every((column) => Array.isArray(column));
  try {
    const frame = new dfd.DataFrame(rows, {
      columns: table.columns,
      dtypes: table.dtypes.map(toDanfoDtype),
      ...(table.index ? { index: table.index } : {}),
      ...(handOver ? { config: { lowMemoryMode: true } } : {}),
    });
    if (handOver) {
      const internals = frame as unknown as NdframeInternals;
      internals.$dataIncolumnFormat = table.data;
      internals.$config.setIsLowMemoryMode(false);
    }
    return frame;
  } catch (err) {
    throw new BadInput(`${owner}: cannot build a DataFrame from the input: ${(err as Error).message}`);
  }
}

/** Rows `start`..`stop` of a columnar table, into `rows`. */
function fillRows(rows: unknown[][], table: Table, start: number, stop: number): void {
  const nc = table.columns.length;
  for (let r = start; r < stop; r++) {
    const row = new Array(nc);
    for (let c = 0; c < nc; c++) row[c] = table.data[c]![r];
    rows[r] = row;
  }
}

/** Build a danfo DataFrame from a table. */
export function tableToDanfo(dfd: Danfo, table: Table, owner: string): DataFrame {
  const n = rowCount(table);
  const rows: unknown[][] = new Array(n);
  fillRows(rows, table, 0, n);
  return frameFromRows(dfd, rows, table, owner);
}

/** Cells handled between two turns of the event loop when a request's table becomes a DataFrame. */
const SLICE_CELLS = 65_536;

/**
 * `tableToDanfo` for a request's table: the rows are built a slice at a time, letting other requests (and
 * health checks) be served in between; only danfo's constructor (~50 ms for 4 M cells) runs in one piece.
 */
export async function tableToDanfoInSlices(dfd: Danfo, table: Table, owner: string): Promise<DataFrame> {
  const n = rowCount(table);
  const rows: unknown[][] = new Array(n);
  const step = Math.max(1, Math.floor(SLICE_CELLS / Math.max(1, table.columns.length)));
  for (let start = 0; start < n; start += step) {
    if (start > 0) await nextTurn();
    fillRows(rows, table, start, Math.min(n, start + step));
  }
  return frameFromRows(dfd, rows, table, owner);
}

export function seriesFromValues(
  dfd: Danfo,
  values: unknown[],
  index: Label[] | null,
  dtype: Table['dtypes'][number],
  name: string | null,
  owner: string,
): Series {
  try {
    // danfo rejects dtypes on an empty series unless columns are given.
    return new dfd.Series(values, {
      ...(values.length > 0 ? { dtypes: [toDanfoDtype(dtype)] } : {}),
      ...(index ? { index } : {}),
      ...(name !== null ? { columns: [name] } : {}),
    });
  } catch (err) {
    throw new BadInput(`${owner}: cannot build a Series from the input: ${(err as Error).message}`);
  }
}

interface NdframeLike {
  $isSeries: boolean;
  columns: string[];
  index: Label[];
  dtypes: string[];
  values: unknown[];
}

/** Duck-typed: a danfo DataFrame (any copy of danfo, so not `instanceof`). */
export function isDataFrame(value: unknown): value is DataFrame {
  const v = value as NdframeLike | null;
  return (
    typeof v === 'object' &&
    v !== null &&
    v.$isSeries === false &&
    Array.isArray(v.columns) &&
    Array.isArray(v.values)
  );
}

export function isSeries(value: unknown): value is Series {
  const v = value as NdframeLike | null;
  return typeof v === 'object' && v !== null && v.$isSeries === true && Array.isArray(v.values);
}

export function frameView(df: DataFrame): FrameView {
  const f = df as unknown as NdframeLike;
  const rows = f.values as unknown[][];
  return {
    columns: f.columns.map(String),
    index: f.index,
    dtypes: f.dtypes.map(fromDanfoDtype),
    // danfo keeps a 1-D array for a one-column frame built from a flat list.
    rows: rows.length > 0 && !Array.isArray(rows[0]) ? rows.map((v) => [v]) : rows,
  };
}

export function seriesView(s: Series): SeriesView {
  const f = s as unknown as NdframeLike;
  const name = f.columns?.[0];
  return {
    name: name === undefined || name === '0' ? null : String(name),
    index: f.index,
    dtype: fromDanfoDtype(f.dtypes[0] ?? 'string'),
    values: f.values,
  };
}
