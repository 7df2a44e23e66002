import { BadInput, DEFAULT_LIMITS } from '@tiffin/core';
import { checkTableCells } from '../table/cell-limit.js';
import { dtypeKind } from '../table/dtype.js';
import type { RawTable } from '../table/table.js';
import type { TypedColumn } from '../table/typing.js';
import type { FrameView } from '../table/view.js';

/** Split CSV text into records of fields (RFC 4180: `,`, `"` quoting with `""` escapes, CRLF or LF). */
export function parseCsvRecords(text: string, owner: string): string[][] {
  const records: string[][] = [];
  let field = '';
  let record: string[] = [];
  let i = 0;
  let line = 1;
  const n = text.length;
  let quotedField = false;
  while (i < n) {
    const ch = text.charCodeAt(i);
    if (ch === 34 /* " */ && field === '' && !quotedField) {
      // Quoted field: read to the closing quote.
      quotedField = true;
      const startLine = line;
      i++;
      for (;;) {
        if (i >= n) throw new BadInput(`${owner}: CSV line ${startLine}: unterminated quoted field`);
        const q = text.indexOf('"', i);
        if (q < 0) throw new BadInput(`${owner}: CSV line ${startLine}: unterminated quoted field`);
        const chunk = text.slice(i, q);
        for (let k = 0; k < chunk.length; k++) if (chunk.charCodeAt(k) === 10) line++;
        field += chunk;
        if (text.charCodeAt(q + 1) === 34) {
          field += '"';
          i = q + 2;
        } else {
          i = q + 1;
          break;
        }
      }
      const next = text.charCodeAt(i);
      if (i < n && next !== 44 && next !== 10 && next !== 13) {
        throw new BadInput(`${owner}: CSV line ${line}: unexpected character after a closing quote`);
      }
      continue;
    }
    if (ch === 44 /* , */) {
      record.push(field);
      field = '';
      quotedField = false;
      i++;
    } else if (ch === 10 || ch === 13) {
      record.push(field);
      records.push(record);
      record = [];
      field = '';
      quotedField = false;
      i += ch === 13 && text.charCodeAt(i + 1) === 10 ? 2 : 1;
      line++;
    } else {
      // Unquoted run up to the next separator.
      let j = i;
      while (j < n) {
        const c = text.charCodeAt(j);
        if (c === 44 || c === 10 || c === 13) break;
        j++;
      }
      field += text.slice(i, j);
      i = j;
    }
  }
  if (field !== '' || record.length > 0 || quotedField) {
    record.push(field);
    records.push(record);
  }
  return records;
}

/**
 * CSV body → raw table (docs/spec/io-descriptors.md §3.3 csv): the first record is the header; an empty header cell is named
 * `Unnamed: <position>` (so pandas' own CSV, whose first column is the unlabelled index, arrives with
 * an `Unnamed: 0` column, as pandas.read_csv gives it). A row with a different field count is a 400.
 */
export function rawTableFromCsv(
  body: Buffer,
  owner: string,
  maxCells: number = DEFAULT_LIMITS.maxElements,
): RawTable {
  let text = body.toString('utf8');
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  const records = parseCsvRecords(text, owner).filter((r) => !(r.length === 1 && r[0] === ''));
  if (records.length === 0) throw new BadInput(`${owner}: CSV body is empty (a header line is required)`);
  const header = records[0]!;
  const columns = header.map((h, i) => (h === '' ? `Unnamed: ${i}` : h));
  const width = columns.length;
  const nrows = records.length - 1;
  checkTableCells(nrows, width, maxCells, owner);
  const data: unknown[][] = Array.from({ length: width }, () => new Array(nrows));
  for (let r = 0; r < nrows; r++) {
    const rec = records[r + 1]!;
    if (rec.length !== width) {
      throw new BadInput(
        `${owner}: CSV data row ${r + 1} (line ${r + 2}) has ${rec.length} fields, expected ${width} as in the header`,
      );
    }
    for (let c = 0; c < width; c++) data[c]![r] = rec[c];
  }
  return { columns, index: null, data };
}

const INT = /^[-+]?\d+$/;
const FLOAT = /^[-+]?(\d+\.?\d*([eE][-+]?\d+)?|\.\d+([eE][-+]?\d+)?|inf|nan)$/i;
const BOOL = /^(True|False|true|false|TRUE|FALSE)$/;

/** Per-column typing of CSV cells: int64, float64 (empty → NaN), bool, else text (empty → null). */
export function inferCsvColumn(cells: unknown[]): TypedColumn {
  const values = cells as string[];
  let ints = 0;
  let floats = 0;
  let empty = 0;
  let bools = 0;
  for (const v of values) {
    if (v === '') empty++;
    else if (INT.test(v)) ints++;
    else if (FLOAT.test(v)) floats++;
    else if (BOOL.test(v)) bools++;
  }
  const n = values.length;
  if (n > 0 && empty === n) return { dtype: 'float64', values: values.map(() => Number.NaN) };
  if (ints + floats + empty === n && n > 0) {
    if (floats === 0 && empty === 0 && values.every((v) => Number.isSafeInteger(Number(v)))) {
      return { dtype: 'int64', values: values.map(Number) };
    }
    return { dtype: 'float64', values: values.map(parseCsvFloat) };
  }
  if (bools === n && n > 0) return { dtype: 'bool', values: values.map((v) => v.toLowerCase() === 'true') };
  return { dtype: n === 0 ? 'object' : 'object', values: values.map((v) => (v === '' ? null : v)) };
}

function parseCsvFloat(v: string): number {
  if (v === '') return Number.NaN;
  const t = v.toLowerCase();
  if (t.endsWith('nan')) return Number.NaN;
  if (t.endsWith('inf')) return t.startsWith('-') ? -Infinity : Infinity;
  return Number(v);
}

function quote(s: string): string {
  return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** A float the way Python prints it: integral values keep `.0` (`1.0`), exponents have 2 digits. */
export function pyFloat(v: number): string {
  if (Number.isNaN(v)) return '';
  if (!Number.isFinite(v)) return v > 0 ? 'inf' : '-inf';
  if (Number.isInteger(v) && Math.abs(v) < 1e16) return `${v}.0`;
  return String(v).replace(/e([+-])(\d)$/, 'e$10$2');
}

function csvCell(v: unknown, floatColumn: boolean): string {
  if (v === null || v === undefined) return '';
  switch (typeof v) {
    case 'number':
      return floatColumn ? pyFloat(v) : Number.isFinite(v) ? String(v) : Number.isNaN(v) ? '' : pyFloat(v);
    case 'boolean':
      return v ? 'True' : 'False';
    case 'string':
      return quote(v);
    case 'bigint':
      return v.toString();
    default:
      if (v instanceof Date)
        return Number.isNaN(v.getTime()) ? '' : v.toISOString().replace('T', ' ').replace('Z', '');
      return quote(JSON.stringify(v));
  }
}

/** A DataFrame as CSV, as pandas' `to_csv()` writes it: index first, header cell for it empty. */
export function frameToCsv(view: FrameView): string {
  const floatCols = view.dtypes.map((d) => dtypeKind(d) === 'float');
  const lines: string[] = new Array(view.rows.length + 1);
  lines[0] = ['', ...view.columns.map(quote)].join(',');
  for (let r = 0; r < view.rows.length; r++) {
    const row = view.rows[r]!;
    let s = csvCell(view.index[r], false);
    for (let c = 0; c < row.length; c++) s += `,${csvCell(row[c], floatCols[c]!)}`;
    lines[r + 1] = s;
  }
  return `${lines.join('\n')}\n`;
}
