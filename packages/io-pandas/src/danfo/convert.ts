import { BadInput } from '@tiffin/core';
import { fromDanfoDtype, toDanfoDtype } from '../table/dtype.js';
import { type Label, rowCount, type Table } from '../table/table.js';
import type { FrameView, SeriesView } from '../table/view.js';
import type { Danfo, DataFrame, Series } from './load.js';

/** Build a danfo DataFrame; danfo's own complaints (duplicate labels, ...) are the client's input. */
export function tableToDanfo(dfd: Danfo, table: Table, owner: string): DataFrame {
  const n = rowCount(table);
  const nc = table.columns.length;
  const rows: unknown[][] = new Array(n);
  for (let r = 0; r < n; r++) {
    const row = new Array(nc);
    for (let c = 0; c < nc; c++) row[c] = table.data[c]![r];
    rows[r] = row;
  }
  try {
    return new dfd.DataFrame(rows, {
      columns: table.columns,
      dtypes: table.dtypes.map(toDanfoDtype),
      ...(table.index ? { index: table.index } : {}),
    });
  } catch (err) {
    throw new BadInput(`${owner}: cannot build a DataFrame from the input: ${(err as Error).message}`);
  }
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
