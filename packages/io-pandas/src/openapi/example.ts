import { type Dtype, dtypeKind } from '../table/dtype.js';
import type { FrameView, SeriesView } from '../table/view.js';

/**
 * Request examples derived from what a descriptor declares, for `/docs.json` and the API page when no sample
 * was given: one row (one value for a Series) of the declared columns and dtypes.
 */

function exampleValue(dtype: Dtype | null): unknown {
  switch (dtype === null ? 'float' : dtypeKind(dtype)) {
    case 'bool':
      return false;
    case 'str':
    case 'object':
      return '';
    case 'datetime':
      return '2024-01-01T00:00:00.000Z';
    default:
      return 0;
  }
}

/** One row: the declared columns (from `columns` or the `dtype` map; else one column `a`) with their dtypes. */
export function exampleFrame(
  columns: readonly string[] | null,
  dtypes: Record<string, Dtype> | null,
): FrameView {
  const names = columns ?? (dtypes ? Object.keys(dtypes) : ['a']);
  const types = names.map((name) => dtypes?.[name] ?? ('float64' as Dtype));
  return { columns: names, index: [0], dtypes: types, rows: [types.map(exampleValue)] };
}

/** `length` values of `dtype` (no shape: one). */
export function exampleSeries(dtype: Dtype | null, shape: readonly number[] | null): SeriesView {
  const length = shape?.[0] !== undefined && shape[0] >= 0 ? shape[0] : 1;
  const type = dtype ?? ('float64' as Dtype);
  return {
    name: null,
    index: Array.from({ length }, (_, i) => i),
    dtype: type,
    values: Array.from({ length }, () => exampleValue(type)),
  };
}
