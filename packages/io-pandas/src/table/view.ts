import type { Dtype } from './dtype.js';
import type { Label } from './table.js';

/** A read-only, row-major look at a DataFrame, as the writers need it. */
export interface FrameView {
  readonly columns: readonly string[];
  readonly index: readonly Label[];
  readonly dtypes: readonly Dtype[];
  /** Row arrays, one value per column. */
  readonly rows: readonly (readonly unknown[])[];
}

/** A read-only look at a Series. */
export interface SeriesView {
  readonly name: string | null;
  readonly index: readonly Label[];
  readonly dtype: Dtype;
  readonly values: readonly unknown[];
}

/** Column `c` of a view (column-major writers: parquet, `columns` orient, gRPC). */
export function viewColumn(view: FrameView, c: number): unknown[] {
  const out = new Array(view.rows.length);
  for (let r = 0; r < view.rows.length; r++) out[r] = view.rows[r]![c];
  return out;
}
