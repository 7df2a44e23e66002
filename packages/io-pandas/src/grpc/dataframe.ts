import { BadInput } from '@tiffin/core';
import type { DataFrameMessage } from '@tiffin/core/descriptor';
import type { Table } from '../table/table.js';
import { type FrameView, viewColumn } from '../table/view.js';
import { fieldForValues, fieldValues, filledField, SERIES_FIELDS, toMessage } from './series-message.js';

/** DataFrame message (column orientation) → table; index labels are "0", "1", … (docs/spec/io-descriptors.md §11.3). */
export function dataFrameFromMessage(msg: DataFrameMessage): Table {
  const names = msg.column_names ?? [];
  const cols = msg.columns ?? [];
  if (names.length !== cols.length) {
    throw new BadInput(`DataFrame message has ${names.length} column_names but ${cols.length} columns`);
  }
  const data: unknown[][] = [];
  const dtypes: Table['dtypes'] = [];
  cols.forEach((col, i) => {
    const field = filledField(col);
    if (field === null) throw new BadInput(`DataFrame message column '${names[i]}' has no values`);
    data.push(fieldValues(col, field));
    dtypes.push(SERIES_FIELDS[field]);
  });
  const n = data[0]?.length ?? 0;
  data.forEach((col, i) => {
    if (col.length !== n)
      throw new BadInput(`DataFrame message column '${names[i]}' has ${col.length} values, expected ${n}`);
  });
  return { columns: [...names], index: Array.from({ length: n }, (_, i) => String(i)), data, dtypes };
}

/** View → DataFrame message; each column goes in the field of its dtype. */
export function dataFrameToMessage(view: FrameView): DataFrameMessage {
  return {
    column_names: [...view.columns],
    columns: view.columns.map((name, c) => {
      const values = viewColumn(view, c);
      return toMessage(fieldForValues(view.dtypes[c]!, values, `column "${name}"`), values);
    }),
  };
}
