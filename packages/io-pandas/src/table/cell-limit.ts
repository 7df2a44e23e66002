import { PayloadTooLarge } from '@tiffin/core';

/**
 * Refuse (413) a table of `rows` × `columns` cells over `maxCells` (`Limits.maxElements`), checked before the
 * cells are allocated: layouts where missing cells are filled in (records with new keys, nested objects,
 * table schemas, Parquet footers) can declare far more cells than the body holds.
 */
export function checkTableCells(rows: number, columns: number, maxCells: number, owner: string): void {
  if (rows * columns > maxCells) {
    throw new PayloadTooLarge(
      `${owner}: the table is ${rows} rows × ${columns} columns, over the limit of ${maxCells} cells (limit maxElements)`,
    );
  }
}
