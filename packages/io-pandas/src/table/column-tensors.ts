// A DataFrame over the Open Inference Protocol: one tensor per column, in and out.
import { BadInput, InternalServerError, NDArray, type Tensor, type TensorMetadata } from '@tiffin/core';
import { type Datatype, datatypeOf, writeJson } from '@tiffin/core/descriptor';

type Row = Record<string, unknown>;

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Column tensors (each `[rows]` or `[rows, 1]`, all as long) → a table body in pandas `orient` layout. */
export function tableFromColumns(tensors: Tensor[], orient: string): string {
  const rows = tensors[0]?.array.shape[0] ?? 0;
  for (const { name, array } of tensors) {
    const ok = array.shape.length === 1 || (array.shape.length === 2 && array.shape[1] === 1);
    if (!ok) throw new BadInput(`Column tensor '${name}' must have shape [rows] or [rows, 1]`);
    if (array.shape[0] !== rows) throw new BadInput(`Column tensors must have the same length (${name})`);
  }
  const names = tensors.map((t) => t.name);
  const cell = (c: number, r: number) => tensors[c]!.array.at(r);
  const range = Array.from({ length: rows }, (_, r) => r);
  const records = (): Row[] => range.map((r) => Object.fromEntries(names.map((n, c) => [n, cell(c, r)])));
  const values = () => range.map((r) => names.map((_, c) => cell(c, r)));
  switch (orient) {
    case 'records':
      return writeJson(records());
    case 'values':
      return writeJson(values());
    case 'split':
      return writeJson({ columns: names, index: range, data: values() });
    case 'columns':
      return writeJson(
        Object.fromEntries(names.map((n, c) => [n, Object.fromEntries(range.map((r) => [r, cell(c, r)]))])),
      );
    case 'index':
      return writeJson(Object.fromEntries(records().map((row, r) => [r, row])));
    case 'table':
      return writeJson({ schema: { fields: names.map((name) => ({ name })) }, data: records() });
    default:
      throw new InternalServerError(`Unknown DataFrame orient '${orient}'`);
  }
}

/** Rows of a pandas JSON table in `orient` layout (index dropped). */
function rowsOf(value: unknown, orient: string): Row[] {
  if (orient === 'records' && Array.isArray(value)) return value as Row[];
  if (orient === 'values' && Array.isArray(value)) {
    return (value as unknown[][]).map((row) => Object.fromEntries(row.map((v, i) => [String(i), v])));
  }
  if (orient === 'split' && isObject(value) && Array.isArray(value.columns) && Array.isArray(value.data)) {
    const columns = value.columns as string[];
    return (value.data as unknown[][]).map((row) => Object.fromEntries(columns.map((c, i) => [c, row[i]])));
  }
  if (orient === 'index' && isObject(value)) return Object.values(value) as Row[];
  if (orient === 'columns' && isObject(value)) {
    const columns = Object.entries(value as Record<string, Row>);
    const labels = columns.length > 0 ? Object.keys(columns[0]![1]) : [];
    return labels.map((label) => Object.fromEntries(columns.map(([c, col]) => [c, col[label]])));
  }
  if (orient === 'table' && isObject(value) && Array.isArray(value.data)) {
    const schema = isObject(value.schema) ? value.schema : {};
    const keys = Array.isArray(schema.primaryKey) ? (schema.primaryKey as string[]) : [];
    return (value.data as Row[]).map((row) =>
      Object.fromEntries(Object.entries(row).filter(([k]) => !keys.includes(k))),
    );
  }
  throw new InternalServerError(`DataFrame output does not match orient '${orient}'`);
}

/** One tensor per column: INT64 for integers, FP64 for other numbers (null → NaN), BOOL, else BYTES. */
function columnArray(values: unknown[]): NDArray {
  if (values.every((v) => typeof v === 'boolean')) return NDArray.from(values, 'bool');
  if (values.every((v) => typeof v === 'number' && Number.isSafeInteger(v)))
    return NDArray.from(values, 'int64');
  if (values.every((v) => typeof v === 'number' || v === null)) {
    return NDArray.from(
      values.map((v) => (v === null ? Number.NaN : v)),
      'float64',
    );
  }
  return new NDArray(
    values.map((v) => (typeof v === 'string' ? v : writeJson(v))),
    [values.length],
    'str',
  );
}

/** A DataFrame output body (parsed JSON in `orient` layout) → one tensor per column. */
export function columnsFromTable(value: unknown, orient: string): Tensor[] {
  const rows = rowsOf(value, orient);
  const names = [...new Set(rows.flatMap((r) => Object.keys(r)))];
  return names.map((name) => ({ name, array: columnArray(rows.map((r) => r[name] ?? null)) }));
}

/** Column tensors a table declares (`columns`, typed by a `dtype` map when it has one; others BYTES). */
export function columnTensorMetadata(
  columns: readonly string[],
  dtypes: Readonly<Record<string, string>>,
): TensorMetadata[] {
  return columns.map((name) => {
    const dtype = dtypes[name];
    let datatype: Datatype = 'BYTES';
    try {
      if (dtype) datatype = datatypeOf(NDArray.zeros([0], dtype as never).dtype);
    } catch {
      // A pandas-only dtype name (category, datetime): described as BYTES.
    }
    return { name, datatype, shape: [-1] };
  });
}
