import { registerJsonEncoder } from '@tiffin/core';
import { frameView, isDataFrame, isSeries, seriesView } from './danfo/convert.js';
import type { Label } from './table/table.js';

function cell(v: unknown): unknown {
  return v instanceof Date ? v.getTime() : v;
}

/**
 * docs/spec/io-descriptors.md §5.3: the JSON descriptor writes a DataFrame as `{column: {indexLabel: value}}` and a Series as
 * `{indexLabel: value}`. Registered when this package is imported; the caller encodes nested values
 * (non-finite numbers → null, docs/spec/io-descriptors.md D3).
 */
export function registerPandasJsonEncoders(): void {
  registerJsonEncoder({
    name: 'danfojs-node DataFrame',
    test: isDataFrame,
    encode(value) {
      const view = frameView(value as Parameters<typeof frameView>[0]);
      const out: Record<string, Record<string, unknown>> = {};
      view.columns.forEach((c, ci) => {
        const col: Record<string, unknown> = {};
        view.rows.forEach((row, r) => {
          col[String(view.index[r] as Label)] = cell(row[ci]);
        });
        out[c] = col;
      });
      return out;
    },
  });
  registerJsonEncoder({
    name: 'danfojs-node Series',
    test: isSeries,
    encode(value) {
      const view = seriesView(value as Parameters<typeof seriesView>[0]);
      const out: Record<string, unknown> = {};
      view.values.forEach((v, i) => {
        out[String(view.index[i])] = cell(v);
      });
      return out;
    },
  });
}
