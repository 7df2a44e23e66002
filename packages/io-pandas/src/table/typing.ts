import { BadInput } from '@tiffin/core';
import { type Dtype, dtypeKind, integerRange } from './dtype.js';

/** How columns get their dtype when the descriptor does not force one. */
export type InferMode = 'infer' | 'none';

export interface TypedColumn {
  dtype: Dtype;
  values: unknown[];
}

const NUMERIC = /^\s*[-+]?(\d+\.?\d*([eE][-+]?\d+)?|\.\d+([eE][-+]?\d+)?|inf|infinity|nan)\s*$/i;

function parseNumericString(s: string): number | undefined {
  if (!NUMERIC.test(s)) return undefined;
  const t = s.trim().toLowerCase();
  if (t.endsWith('nan')) return Number.NaN;
  if (t.endsWith('inf') || t.endsWith('infinity')) return t.startsWith('-') ? -Infinity : Infinity;
  return Number(t);
}

/**
 * Infer a column's dtype from its JSON values (docs/spec/io-descriptors.md §3.3): integers and integral floats → int64,
 * other numbers (or numbers with nulls) → float64 with NaN, booleans → bool (with nulls → float64),
 * all-numeric strings → numbers (unless `mode` is 'none'), anything else → object (values kept).
 */
export function inferColumn(values: unknown[], mode: InferMode): TypedColumn {
  let ints = 0;
  let floats = 0;
  let nulls = 0;
  let bools = 0;
  let strings = 0;
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    switch (typeof v) {
      case 'number':
        if (Number.isInteger(v)) ints++;
        else floats++;
        break;
      case 'bigint':
        ints++;
        break;
      case 'boolean':
        bools++;
        break;
      case 'string':
        strings++;
        break;
      default:
        if (v === null || v === undefined) nulls++;
    }
  }
  const n = values.length;
  if (n === 0) return { dtype: 'object', values };
  if (ints + floats + nulls === n) {
    if (floats === 0 && nulls === 0) return { dtype: 'int64', values };
    return {
      dtype: 'float64',
      values: nulls === 0 ? values : values.map((v) => (v == null ? Number.NaN : v)),
    };
  }
  if (bools === n) return { dtype: 'bool', values };
  if (bools + nulls === n)
    return { dtype: 'float64', values: values.map((v) => (v == null ? Number.NaN : v ? 1 : 0)) };
  if (mode === 'infer' && strings > 0 && strings + nulls === n) {
    const parsed: unknown[] = new Array(n);
    let allInt = nulls === 0;
    for (let i = 0; i < n; i++) {
      const v = values[i];
      if (v == null) {
        parsed[i] = Number.NaN;
        continue;
      }
      const num = parseNumericString(v as string);
      if (num === undefined) return { dtype: 'object', values: nullify(values) };
      if (!Number.isInteger(num)) allInt = false;
      parsed[i] = num;
    }
    return { dtype: allInt ? 'int64' : 'float64', values: parsed };
  }
  return { dtype: 'object', values: nullify(values) };
}

function nullify(values: unknown[]): unknown[] {
  for (let i = 0; i < values.length; i++) if (values[i] === undefined) values[i] = null;
  return values;
}

/** Where a cast failed, for the 400 message. */
export interface CastSite {
  /** e.g. `PandasDataFrame` */
  owner: string;
  column: string | null;
  /** Row labels, to name the failing row by its label. */
  labelOf: (row: number) => string | number;
}

function castError(site: CastSite, row: number, value: unknown, dtype: Dtype, why: string): BadInput {
  const where = site.column === null ? '' : ` column '${site.column}'`;
  return new BadInput(
    `${site.owner}:${where} row ${JSON.stringify(site.labelOf(row))} (position ${row}): cannot convert ${JSON.stringify(value) ?? String(value)} to ${dtype}: ${why}`,
  );
}

/**
 * Cast raw values (JSON values or CSV cells) to `dtype`. A value that does not convert is a client
 * error naming the column and row (docs/spec/io-descriptors.md D1): no silent fallback when the descriptor enforces a dtype.
 */
export function castColumn(values: unknown[], dtype: Dtype, site: CastSite): unknown[] {
  const kind = dtypeKind(dtype);
  const out: unknown[] = new Array(values.length);
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    switch (kind) {
      case 'int':
      case 'uint': {
        let num: number | undefined;
        if (typeof v === 'number') num = Math.trunc(v);
        else if (typeof v === 'boolean') num = v ? 1 : 0;
        else if (typeof v === 'bigint') num = Number(v);
        else if (typeof v === 'string' && /^\s*[-+]?\d+\s*$/.test(v)) num = Number(v);
        if (num === undefined || !Number.isFinite(num)) {
          throw castError(
            site,
            i,
            v,
            dtype,
            v == null ? 'missing values cannot be integers' : 'not an integer',
          );
        }
        const [lo, hi] = integerRange(dtype) ?? [-Infinity, Infinity];
        if (num < lo || num > hi) throw castError(site, i, v, dtype, `out of range [${lo}, ${hi}]`);
        out[i] = num;
        break;
      }
      case 'float': {
        if (typeof v === 'number') out[i] = v;
        else if (v == null || v === '') out[i] = Number.NaN;
        else if (typeof v === 'boolean') out[i] = v ? 1 : 0;
        else if (typeof v === 'bigint') out[i] = Number(v);
        else {
          const num = typeof v === 'string' ? parseNumericString(v) : undefined;
          if (num === undefined) throw castError(site, i, v, dtype, 'not a number');
          out[i] = num;
        }
        break;
      }
      case 'bool': {
        if (typeof v === 'boolean') out[i] = v;
        else if (typeof v === 'number') out[i] = v !== 0;
        else if (typeof v === 'string' && /^(true|false)$/i.test(v.trim()))
          out[i] = v.trim().toLowerCase() === 'true';
        else throw castError(site, i, v, dtype, 'not a boolean');
        break;
      }
      case 'str':
        out[i] =
          v == null
            ? null
            : typeof v === 'string'
              ? v
              : typeof v === 'object'
                ? JSON.stringify(v)
                : String(v);
        break;
      case 'datetime': {
        let d: Date | undefined;
        if (v instanceof Date) d = v;
        else if (typeof v === 'number') d = new Date(v);
        else if (typeof v === 'string') d = new Date(v);
        if (v == null) out[i] = null;
        else if (!d || Number.isNaN(d.getTime())) throw castError(site, i, v, dtype, 'not a date/time');
        else out[i] = d;
        break;
      }
      default:
        out[i] = v === undefined ? null : v;
    }
  }
  return out;
}
