import { BadInput, DEFAULT_LIMITS } from '@tiffin/core';
import { checkJsonDepth } from '@tiffin/core/descriptor';
import { checkTableCells } from '../table/cell-limit.js';
import type { Orient } from '../table/orient.js';
import { axisLabel, type Label, type RawTable, typeName } from '../table/table.js';

/**
 * Parse a request body as JSON; a syntax error is the client's (docs/spec/io-descriptors.md D1), with the parser's position. Nesting past
 * `maxDepth` (the server's limit) is a 400 too: the table builders walk values recursively.
 */
export function parseJsonBody(body: Buffer, owner: string, maxDepth: number): unknown {
  let text = body.toString('utf8');
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new BadInput(`${owner}: request body is not valid JSON: ${(err as Error).message}`);
  }
  checkJsonDepth(value, text.length, maxDepth, `${owner}: the request body`);
  return value;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function expect(cond: boolean, owner: string, orient: Orient, what: string): asserts cond {
  if (!cond) throw new BadInput(`${owner} (orient '${orient}'): ${what}`);
}

/** Rows given as arrays (values orient, or records given as lists): columns 0..k-1, ragged → 400. */
function fromRowArrays(rows: unknown[], owner: string, orient: Orient, columns?: string[]): RawTable {
  const width = columns?.length ?? (Array.isArray(rows[0]) ? (rows[0] as unknown[]).length : 0);
  const data: unknown[][] = Array.from({ length: width }, () => new Array(rows.length));
  for (let r = 0; r < rows.length; r++) {
    const row = rows[r];
    expect(Array.isArray(row), owner, orient, `row ${r} is ${typeName(row)}, expected an array of values`);
    expect(
      row.length === width,
      owner,
      orient,
      `row ${r} has ${row.length} values, expected ${width}${columns ? ` (one per column)` : ' (as row 0)'}`,
    );
    for (let c = 0; c < width; c++) data[c]![r] = row[c];
  }
  return { columns: columns ?? Array.from({ length: width }, (_, i) => String(i)), index: null, data };
}

function fromRecords(rows: unknown[], owner: string, orient: Orient, maxCells: number): RawTable {
  if (rows.length > 0 && Array.isArray(rows[0])) return fromRowArrays(rows, owner, orient);
  const positions = new Map<string, number>();
  const columns: string[] = [];
  const data: unknown[][] = [];
  const n = rows.length;
  for (let r = 0; r < n; r++) {
    const row = rows[r];
    expect(
      isPlainObject(row),
      owner,
      orient,
      `row ${r} is ${typeName(row)}, expected an object of column values`,
    );
    for (const key in row) {
      if (!positions.has(key)) {
        // Each new key adds a whole column (earlier rows' cells are null): count them before allocating.
        checkTableCells(n, columns.length + 1, maxCells, owner);
        positions.set(key, columns.length);
        columns.push(key);
        // Rows before this one lack the column: missing cells are null.
        data.push(new Array(n).fill(null, 0, r));
      }
    }
  }
  for (let c = 0; c < columns.length; c++) {
    const key = columns[c]!;
    const col = data[c]!;
    for (let r = 0; r < n; r++) {
      const v = (rows[r] as Record<string, unknown>)[key];
      col[r] = v === undefined ? null : v;
    }
  }
  return { columns, index: null, data };
}

/** `{outer: {inner: v}}` → columns/rows; `outerIsColumn` picks which axis the outer keys are. */
function fromNested(
  obj: Record<string, unknown>,
  outerIsColumn: boolean,
  owner: string,
  orient: Orient,
  maxCells: number,
): RawTable {
  const outerKeys = Object.keys(obj);
  const innerPos = new Map<string, number>();
  const innerKeys: string[] = [];
  for (const k of outerKeys) {
    const inner = obj[k];
    expect(
      isPlainObject(inner),
      owner,
      orient,
      `value of ${outerIsColumn ? 'column' : 'index label'} ${JSON.stringify(k)} is ${typeName(inner)}, expected an object`,
    );
    for (const ik in inner) {
      if (!innerPos.has(ik)) {
        innerPos.set(ik, innerKeys.length);
        innerKeys.push(ik);
      }
    }
  }
  // Missing cells are filled in: outer × inner keys may be far more cells than the body holds.
  checkTableCells(outerKeys.length, innerKeys.length, maxCells, owner);
  const cell = (outer: string, inner: string) => {
    const v = (obj[outer] as Record<string, unknown>)[inner];
    return v === undefined ? null : v;
  };
  if (outerIsColumn) {
    return {
      columns: outerKeys,
      index: innerKeys.map(axisLabel),
      data: outerKeys.map((c) => innerKeys.map((r) => cell(c, r))),
    };
  }
  return {
    columns: innerKeys,
    index: outerKeys.map(axisLabel),
    data: innerKeys.map((c) => outerKeys.map((r) => cell(r, c))),
  };
}

function fromSplit(obj: unknown, owner: string, orient: Orient): RawTable {
  expect(
    isPlainObject(obj),
    owner,
    orient,
    `expected an object {"columns", "index", "data"}, got ${typeName(obj)}`,
  );
  const { columns, index, data } = obj;
  expect(Array.isArray(data), owner, orient, `"data" must be an array of rows, got ${typeName(data)}`);
  let names: string[] | undefined;
  if (columns !== undefined) {
    expect(Array.isArray(columns), owner, orient, `"columns" must be an array, got ${typeName(columns)}`);
    names = columns.map((c) => String(c));
  }
  const table = fromRowArrays(data, owner, orient, names);
  if (index !== undefined) {
    expect(Array.isArray(index), owner, orient, `"index" must be an array, got ${typeName(index)}`);
    expect(
      index.length === data.length,
      owner,
      orient,
      `"index" has ${index.length} labels but "data" has ${data.length} rows`,
    );
    table.index = index as Label[];
  }
  return table;
}

function fromTableSchema(obj: unknown, owner: string, orient: Orient, maxCells: number): RawTable {
  expect(isPlainObject(obj), owner, orient, `expected an object {"schema", "data"}, got ${typeName(obj)}`);
  const { schema, data } = obj;
  expect(isPlainObject(schema), owner, orient, `"schema" must be an object, got ${typeName(schema)}`);
  expect(Array.isArray(schema.fields), owner, orient, '"schema.fields" must be an array');
  expect(Array.isArray(data), owner, orient, `"data" must be an array of row objects, got ${typeName(data)}`);
  const fieldNames = (schema.fields as unknown[]).map((f, i) => {
    expect(isPlainObject(f) && typeof f.name === 'string', owner, orient, `schema field ${i} has no "name"`);
    return f.name as string;
  });
  const primaryKey = Array.isArray(schema.primaryKey) ? (schema.primaryKey as string[]) : [];
  const indexField = primaryKey.length === 1 ? primaryKey[0] : undefined;
  const columns = fieldNames.filter((n) => n !== indexField);
  const rows = data as unknown[];
  // Rows lacking a field get null: fields × rows may be far more cells than the body holds.
  checkTableCells(rows.length, columns.length, maxCells, owner);
  const table: RawTable = { columns, index: null, data: columns.map(() => new Array(rows.length)) };
  const index: Label[] = [];
  rows.forEach((row, r) => {
    expect(isPlainObject(row), owner, orient, `row ${r} is ${typeName(row)}, expected an object`);
    columns.forEach((c, i) => {
      const v = row[c];
      table.data[i]![r] = v === undefined ? null : v;
    });
    if (indexField !== undefined) index.push(row[indexField] as Label);
  });
  if (indexField !== undefined) table.index = index;
  return table;
}

/** Interpret parsed JSON as a table in `orient` layout (docs/spec/io-descriptors.md §3.3); wrong shapes are 400s. */
export function rawTableFromJson(
  value: unknown,
  orient: Orient,
  owner: string,
  maxCells: number = DEFAULT_LIMITS.maxElements,
): RawTable {
  switch (orient) {
    case 'records':
      expect(
        Array.isArray(value),
        owner,
        orient,
        `expected a JSON array of row objects, got ${typeName(value)}`,
      );
      return fromRecords(value, owner, orient, maxCells);
    case 'values':
      expect(
        Array.isArray(value),
        owner,
        orient,
        `expected a JSON array of row arrays, got ${typeName(value)}`,
      );
      return fromRowArrays(value, owner, orient);
    case 'columns':
      expect(
        isPlainObject(value),
        owner,
        orient,
        `expected an object {column: {indexLabel: value}}, got ${typeName(value)}`,
      );
      return fromNested(value, true, owner, orient, maxCells);
    case 'index':
      expect(
        isPlainObject(value),
        owner,
        orient,
        `expected an object {indexLabel: {column: value}}, got ${typeName(value)}`,
      );
      return fromNested(value, false, owner, orient, maxCells);
    case 'split':
      return fromSplit(value, owner, orient);
    case 'table':
      return fromTableSchema(value, owner, orient, maxCells);
  }
}
