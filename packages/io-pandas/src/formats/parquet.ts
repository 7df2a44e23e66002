import { BadInput, DEFAULT_LIMITS, isTiffinError } from '@tiffin/core';
import { truncateForMessage } from '@tiffin/core/descriptor';
import { type ColumnData, parquetMetadata, parquetRead, type SchemaElement } from 'hyparquet';
import { compressors } from 'hyparquet-compressors';
import { type ColumnSource, parquetWriteBuffer } from 'hyparquet-writer';
import { type Dtype, dtypeKind } from '../table/dtype.js';
import type { Label, Table } from '../table/table.js';
import { type FrameView, viewColumn } from '../table/view.js';
import { checkParquetDeclaredSizes } from './parquet-bounds.js';

/** Parquet type of a column → the pandas dtype pyarrow would give it (before null handling). */
function dtypeOfElement(el: SchemaElement): Dtype {
  const logical = el.logical_type?.type;
  const ctype = el.converted_type;
  if (logical === 'TIMESTAMP' || logical === 'DATE' || ctype === 'DATE' || ctype?.startsWith('TIMESTAMP')) {
    return 'datetime64[ns]';
  }
  switch (el.type) {
    case 'BOOLEAN':
      return 'bool';
    case 'INT32':
      if (ctype === 'UINT_8' || ctype === 'UINT_16' || ctype === 'UINT_32') return 'uint32';
      return ctype === 'INT_8' ? 'int8' : ctype === 'INT_16' ? 'int16' : 'int32';
    case 'INT64':
      return ctype === 'UINT_64' ? 'uint64' : 'int64';
    case 'INT96':
      return 'datetime64[ns]';
    case 'FLOAT':
      return 'float32';
    case 'DOUBLE':
      return 'float64';
    default:
      return 'object';
  }
}

/** Numbers for exact integers; BigInt only when a value is beyond 2^53 (docs/spec/io-descriptors.md D3). */
function fromBigint(v: unknown): unknown {
  if (typeof v !== 'bigint') return v;
  return v <= BigInt(Number.MAX_SAFE_INTEGER) && v >= BigInt(Number.MIN_SAFE_INTEGER) ? Number(v) : v;
}

interface PandasMetadata {
  index_columns?: Array<string | { kind?: string; start?: number; stop?: number; step?: number }>;
}

/**
 * Decode a Parquet file (any codec hyparquet-compressors covers: snappy, gzip, zstd, brotli, lz4) into
 * a typed table; pandas index metadata (a stored index column or a range index) is honoured.
 */
export async function tableFromParquet(
  body: Buffer,
  owner: string,
  maxCells: number = DEFAULT_LIMITS.maxElements,
  valuesPerByte: number = DEFAULT_LIMITS.maxValuesPerByte,
): Promise<Table> {
  const file = body.buffer.slice(body.byteOffset, body.byteOffset + body.byteLength) as ArrayBuffer;
  let chunks: ColumnData[] = [];
  let rowCount = 0;
  let leaves: SchemaElement[];
  let pandasMeta: PandasMetadata | undefined;
  try {
    const metadata = parquetMetadata(file);
    leaves = metadata.schema.slice(1).filter((el) => !el.num_children);
    if (leaves.length !== metadata.schema.length - 1) {
      throw new Error('nested (struct/list) columns are not supported');
    }
    // Before any page is decoded: the footer's rows × columns and every page header's value count.
    checkParquetDeclaredSizes(file, metadata, leaves.length, { maxValues: maxCells, valuesPerByte, owner });
    const kv = metadata.key_value_metadata?.find((e) => e.key === 'pandas');
    if (kv?.value) pandasMeta = JSON.parse(kv.value) as PandasMetadata;
    rowCount = Number(metadata.num_rows);
    // Column chunks as decoded, not rows: a row array per row would cost more than the values themselves.
    const decoded: ColumnData[] = [];
    await parquetRead({ file, metadata, compressors, onChunk: (chunk) => decoded.push(chunk) });
    chunks = decoded;
  } catch (err) {
    if (isTiffinError(err)) throw err;
    throw new BadInput(`${owner}: request body is not a readable Parquet file: ${(err as Error).message}`);
  }
  const n = rowCount;
  const columns: string[] = [];
  const data: unknown[][] = [];
  const dtypes: Dtype[] = [];
  leaves.forEach((el) => {
    let dtype = dtypeOfElement(el);
    const values: unknown[] = new Array(n).fill(null);
    for (const chunk of chunks) {
      if (chunk.columnName !== el.name) continue;
      const { columnData, rowStart } = chunk;
      // A chunk may run past the rows the footer declares (hyparquet trims them only when it builds rows).
      const stop = Math.min(columnData.length, n - rowStart);
      for (let i = 0; i < stop; i++) values[rowStart + i] = fromBigint(columnData[i]) ?? null;
    }
    let nulls = 0;
    for (let r = 0; r < n; r++) if (values[r] === null) nulls++;
    const kind = dtypeKind(dtype);
    if (nulls > 0 && (kind === 'int' || kind === 'uint' || kind === 'float')) {
      // pandas: integer columns with missing values become float64 with NaN.
      if (kind !== 'float') dtype = 'float64';
      for (let r = 0; r < n; r++) if (values[r] === null) values[r] = Number.NaN;
    } else if (nulls > 0 && kind === 'bool') dtype = 'object';
    if (values.some((v) => typeof v === 'bigint')) dtype = kind === 'uint' ? 'uint64' : 'int64';
    columns.push(el.name);
    data.push(values);
    dtypes.push(dtype);
  });
  let index: Label[] | null = null;
  const indexSpec = pandasMeta?.index_columns?.[0];
  if (typeof indexSpec === 'string' && columns.includes(indexSpec)) {
    const at = columns.indexOf(indexSpec);
    index = data[at] as Label[];
    columns.splice(at, 1);
    data.splice(at, 1);
    dtypes.splice(at, 1);
  } else if (indexSpec && typeof indexSpec === 'object' && indexSpec.kind === 'range') {
    const start = indexSpec.start ?? 0;
    const step = indexSpec.step ?? 1;
    if (start !== 0 || step !== 1) index = Array.from({ length: n }, (_, i) => start + i * step);
  }
  return { columns, index, data, dtypes };
}

const PANDAS_TYPES: Record<string, [string, string]> = {
  int: ['int64', 'int64'],
  uint: ['uint64', 'uint64'],
  float: ['float64', 'float64'],
  bool: ['bool', 'bool'],
  datetime: ['datetime', 'datetime64[ns]'],
  str: ['unicode', 'object'],
  object: ['unicode', 'object'],
};

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/**
 * An integer column's values as Parquet INT64. A value INT64 cannot hold (past ±2^63, or not an integer)
 * is answered as a 400 naming the column: it came from the request in the services that echo data.
 */
function int64Values(name: string, values: unknown[]): bigint[] {
  return values.map((v, row) => {
    const n = typeof v === 'bigint' ? v : typeof v === 'number' && Number.isInteger(v) ? BigInt(v) : null;
    if (n === null || n < INT64_MIN || n > INT64_MAX) {
      throw new BadInput(
        `Column '${truncateForMessage(name)}' row ${row} holds ${truncateForMessage(String(v))}, which Parquet INT64 cannot represent`,
      );
    }
    return n;
  });
}

function columnSource(name: string, values: unknown[], dtype: Dtype): ColumnSource {
  switch (dtypeKind(dtype)) {
    case 'int':
    case 'uint':
      return { name, type: 'INT64', nullable: false, data: int64Values(name, values) };
    case 'float':
      return {
        name,
        type: 'DOUBLE',
        nullable: true,
        data: values.map((v) => (typeof v === 'number' && !Number.isNaN(v) ? v : null)),
      };
    case 'bool':
      return { name, type: 'BOOLEAN', nullable: false, data: values };
    case 'datetime':
      return {
        name,
        type: 'TIMESTAMP',
        nullable: true,
        data: values.map((v) => (v instanceof Date ? v : null)),
      };
    default:
      return {
        name,
        type: 'STRING',
        nullable: true,
        data: values.map((v) => (v == null ? null : typeof v === 'string' ? v : JSON.stringify(v))),
      };
  }
}

function isDefaultIndex(index: readonly Label[]): boolean {
  for (let i = 0; i < index.length; i++) if (index[i] !== i) return false;
  return true;
}

/**
 * A DataFrame as a Parquet file (snappy), readable by pyarrow/pandas, DuckDB and Spark. The index is
 * kept: a 0..n-1 index as pandas' range-index metadata, any other as a `__index_level_0__` column.
 */
export function frameToParquet(view: FrameView): Uint8Array {
  const n = view.rows.length;
  const columnData: ColumnSource[] = view.columns.map((name, c) =>
    columnSource(name, viewColumn(view, c), view.dtypes[c]!),
  );
  const meta: Record<string, unknown>[] = view.columns.map((name, c) => {
    const [pandasType, numpyType] = PANDAS_TYPES[dtypeKind(view.dtypes[c]!)]!;
    return { name, field_name: name, pandas_type: pandasType, numpy_type: numpyType, metadata: null };
  });
  let indexColumns: unknown[];
  if (isDefaultIndex(view.index)) {
    indexColumns = [{ kind: 'range', name: null, start: 0, stop: n, step: 1 }];
  } else {
    const numeric = view.index.every((l) => typeof l === 'number' && Number.isInteger(l));
    const name = '__index_level_0__';
    columnData.push(columnSource(name, [...view.index], numeric ? 'int64' : 'object'));
    meta.push({
      name: null,
      field_name: name,
      pandas_type: numeric ? 'int64' : 'unicode',
      numpy_type: numeric ? 'int64' : 'object',
      metadata: null,
    });
    indexColumns = [name];
  }
  const pandas = {
    index_columns: indexColumns,
    column_indexes: [
      {
        name: null,
        field_name: null,
        pandas_type: 'unicode',
        numpy_type: 'object',
        metadata: { encoding: 'UTF-8' },
      },
    ],
    columns: meta,
    creator: { library: 'tiffin', version: '0.1.0' },
    pandas_version: '2.0.0',
  };
  return new Uint8Array(
    parquetWriteBuffer({ columnData, kvMetadata: [{ key: 'pandas', value: JSON.stringify(pandas) }] }),
  );
}
