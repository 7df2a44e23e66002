import { type Dtype, dtypeKind } from '../table/dtype.js';
import type { Orient } from '../table/orient.js';
import type { Label } from '../table/table.js';
import type { FrameView, SeriesView } from '../table/view.js';

/** `JSON.stringify` replacer for nested object cells: BigInt as a number, non-finite → null (docs/spec/io-descriptors.md D3). */
function replacer(_key: string, v: unknown): unknown {
  if (typeof v === 'bigint') return Number(v);
  return v;
}

/**
 * One cell as JSON text (docs/spec/io-descriptors.md D3: standard JSON; non-finite floats → null). Timestamps are epoch
 * milliseconds, as pandas writes them, except in the `table` orient (ISO 8601).
 */
export function cellJson(v: unknown, isoDates = false): string {
  switch (typeof v) {
    case 'number':
      return Number.isFinite(v) ? String(v) : 'null';
    case 'string':
      return JSON.stringify(v);
    case 'boolean':
      return v ? 'true' : 'false';
    case 'bigint':
      return v.toString();
    case 'undefined':
      return 'null';
    default:
      if (v === null) return 'null';
      if (v instanceof Date) {
        const t = v.getTime();
        if (Number.isNaN(t)) return 'null';
        return isoDates ? JSON.stringify(v.toISOString()) : String(t);
      }
      return JSON.stringify(v, replacer) ?? 'null';
  }
}

/** Label as an object key (`{"0": …}`). */
function keyJson(label: Label): string {
  return JSON.stringify(String(label));
}

function labelJson(label: Label): string {
  return typeof label === 'number' ? cellJson(label) : JSON.stringify(label);
}

/** Table Schema field type of a dtype (orient 'table'). */
function tableFieldType(d: Dtype): string {
  switch (dtypeKind(d)) {
    case 'int':
    case 'uint':
      return 'integer';
    case 'float':
      return 'number';
    case 'bool':
      return 'boolean';
    case 'datetime':
      return 'datetime';
    default:
      return 'string';
  }
}

function indexFieldType(index: readonly Label[]): string {
  return index.every((l) => typeof l === 'number' && Number.isInteger(l)) ? 'integer' : 'string';
}

/**
 * Rows ready for `JSON.stringify` (which already writes NaN/±Infinity as null): datetime cells become
 * epoch milliseconds. BigInt cells make `JSON.stringify` throw; callers then use the cell writer.
 */
function stringifiableRows(view: FrameView): readonly (readonly unknown[])[] {
  const dateCols = view.dtypes.flatMap((d, c) => (dtypeKind(d) === 'datetime' ? [c] : []));
  if (dateCols.length === 0) return view.rows;
  return view.rows.map((row) => {
    const copy = [...row];
    for (const c of dateCols) {
      const v = copy[c];
      if (v instanceof Date) copy[c] = v.getTime();
    }
    return copy;
  });
}

/** Records through V8's native serializer: about 4x faster than writing cells one by one. */
function fastRecords(view: FrameView): string | null {
  if (view.columns.includes('__proto__')) return null;
  // One object literal shape for every row keeps V8 on its fast path; keys are JSON-escaped literals.
  const makeRow = new Function(
    'row',
    `return {${view.columns.map((c, i) => `${JSON.stringify(c)}: row[${i}] ?? null`).join(',')}};`,
  ) as (row: readonly unknown[]) => object;
  try {
    return JSON.stringify(stringifiableRows(view).map(makeRow));
  } catch {
    return null;
  }
}

function fastValues(view: FrameView): string | null {
  try {
    return JSON.stringify(stringifiableRows(view));
  } catch {
    return null;
  }
}

/** A DataFrame as JSON text in `orient` layout (docs/spec/io-descriptors.md §3.4 table). */
export function frameToJson(view: FrameView, orient: Orient): string {
  if (orient === 'records') {
    const fast = fastRecords(view);
    if (fast !== null) return fast;
  } else if (orient === 'values' || orient === 'split') {
    const data = fastValues(view);
    if (data !== null) {
      if (orient === 'values') return data;
      const keys = view.columns.map((c) => JSON.stringify(c));
      return `{"columns":[${keys.join(',')}],"index":[${view.index.map(labelJson).join(',')}],"data":${data}}`;
    }
  }
  return frameToJsonByCell(view, orient);
}

/** The cell-by-cell writer: every orient, any cell type (BigInt included). */
function frameToJsonByCell(view: FrameView, orient: Orient): string {
  const { rows, index } = view;
  const keys = view.columns.map((c) => JSON.stringify(c));
  const nc = keys.length;
  const parts: string[] = new Array(rows.length);
  switch (orient) {
    case 'records':
    case 'table': {
      const iso = orient === 'table';
      const prefixes = keys.map((k, c) => `${c === 0 && !iso ? '{' : ','}${k}:`);
      for (let r = 0; r < rows.length; r++) {
        const row = rows[r]!;
        let s = iso ? `{"index":${labelJson(index[r]!)}` : nc === 0 ? '{' : '';
        for (let c = 0; c < nc; c++) s += prefixes[c] + cellJson(row[c], iso);
        parts[r] = `${s}}`;
      }
      const data = `[${parts.join(',')}]`;
      if (orient === 'records') return data;
      const fields = [
        `{"name":"index","type":"${indexFieldType(index)}"}`,
        ...keys.map((k, c) => `{"name":${k},"type":"${tableFieldType(view.dtypes[c]!)}"}`),
      ];
      return `{"schema":{"fields":[${fields.join(',')}],"primaryKey":["index"],"pandas_version":"1.4.0"},"data":${data}}`;
    }
    case 'values':
    case 'split': {
      for (let r = 0; r < rows.length; r++) {
        const row = rows[r]!;
        let s = '[';
        for (let c = 0; c < nc; c++) s += (c === 0 ? '' : ',') + cellJson(row[c]);
        parts[r] = `${s}]`;
      }
      const data = `[${parts.join(',')}]`;
      if (orient === 'values') return data;
      return `{"columns":[${keys.join(',')}],"index":[${index.map(labelJson).join(',')}],"data":${data}}`;
    }
    case 'index': {
      for (let r = 0; r < rows.length; r++) {
        const row = rows[r]!;
        let s = `${keyJson(index[r]!)}:{`;
        for (let c = 0; c < nc; c++) s += `${c === 0 ? '' : ','}${keys[c]}:${cellJson(row[c])}`;
        parts[r] = `${s}}`;
      }
      return `{${parts.join(',')}}`;
    }
    case 'columns': {
      const labels = index.map(keyJson);
      const cols: string[] = new Array(nc);
      for (let c = 0; c < nc; c++) {
        let s = `${keys[c]}:{`;
        for (let r = 0; r < rows.length; r++)
          s += `${r === 0 ? '' : ','}${labels[r]}:${cellJson(rows[r]![c])}`;
        cols[c] = `${s}}`;
      }
      return `{${cols.join(',')}}`;
    }
  }
}

/** A Series as JSON text in `orient` layout (docs/spec/io-descriptors.md §4). */
export function seriesToJson(view: SeriesView, orient: Orient): string {
  const { values, index } = view;
  switch (orient) {
    case 'records':
    case 'values':
      return `[${values.map((v) => cellJson(v)).join(',')}]`;
    case 'index':
    case 'columns':
      return `{${values.map((v, i) => `${keyJson(index[i]!)}:${cellJson(v)}`).join(',')}}`;
    case 'split':
      return `{"name":${view.name === null ? 'null' : JSON.stringify(view.name)},"index":[${index.map(labelJson).join(',')}],"data":[${values.map((v) => cellJson(v)).join(',')}]}`;
    case 'table': {
      const name = view.name ?? 'values';
      const data = values.map(
        (v, i) => `{"index":${labelJson(index[i]!)},${JSON.stringify(name)}:${cellJson(v, true)}}`,
      );
      return `{"schema":{"fields":[{"name":"index","type":"${indexFieldType(index)}"},{"name":${JSON.stringify(name)},"type":"${tableFieldType(view.dtype)}"}],"primaryKey":["index"],"pandas_version":"1.4.0"},"data":[${data.join(',')}]}`;
    }
  }
}
