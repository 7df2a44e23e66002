import { BadInput, type Batching } from '@tiffin/core';
import { isSeries } from '../danfo/convert.js';
import { type DataFrame, loadedDanfo, type Series } from '../danfo/load.js';

/** Rows of a frame or series along dimension 0 (the only one a table batches along). */
function tableRows(value: DataFrame | Series, batchDim: number, what: string): number {
  if (batchDim !== 0)
    throw new BadInput(`${what}: a batchable API stacks rows (batch_dim 0), not dimension ${batchDim}`);
  const rows = value.shape[0] ?? 0;
  if (rows < 1) throw new BadInput(`${what}: the value holds no rows`);
  return rows;
}

/**
 * Batching of tables (PandasDataFrame, PandasSeries): requests' rows are concatenated in order (danfo
 * `concat`, axis 0); the function's output is cut back into each caller's rows, each part indexed from 0.
 */
export function tableBatching<T extends DataFrame | Series>(what: string): Batching<T, T, T, T> {
  return {
    rows: (item, dim) => tableRows(item, dim, what),
    merge(items) {
      if (items.length === 1) return items[0]!;
      // The input descriptor loaded danfo to decode these values.
      const dfd = loadedDanfo();
      if (!dfd) throw new Error(`${what}: danfojs-node is not loaded`);
      return dfd.concat({ dfList: [...items] as DataFrame[], axis: 0 }) as T;
    },
    batchRows: (batch, dim) => tableRows(batch, dim, what),
    split(batch, rows) {
      const parts: T[] = [];
      let at = 0;
      for (const n of rows) {
        const slice = `${at}:${at + n}`;
        const part = (
          isSeries(batch) ? batch.iloc([slice]) : (batch as DataFrame).iloc({ rows: [slice] })
        ) as T;
        parts.push(part.resetIndex() as T);
        at += n;
      }
      return parts;
    },
  };
}
