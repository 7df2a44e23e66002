import { BadInput } from '@tiffin/core';
import type { Dtype } from '../table/dtype.js';
import type { Orient } from '../table/orient.js';
import { axisLabel, type Label, typeName } from '../table/table.js';
import { castColumn, inferColumn } from '../table/typing.js';
import { parseJsonBody } from './json-parse.js';

/** What decoding a Series body needs from the descriptor and the server's limits (structured-cloneable). */
export interface SeriesDecoding {
  orient: Orient;
  /** true: infer; false: no string→number inference; a dtype name (applied with `enforceDtype`). */
  dtype: string | boolean | null;
  enforceDtype: boolean;
  owner: string;
  maxDepth: number;
}

/** A Series as decoded, before danfo: values typed. */
export interface DecodedSeries {
  name: string | null;
  index: Label[] | null;
  dtype: Dtype;
  values: unknown[];
}

type RawSeries = Omit<DecodedSeries, 'dtype'>;

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** JSON value → raw series per orient (docs/spec/io-descriptors.md §4): a list is values, an object label→value. */
export function seriesFromJson(value: unknown, { orient, owner }: SeriesDecoding): RawSeries {
  if (orient === 'split') {
    if (!isPlainObject(value) || !Array.isArray(value.data)) {
      throw new BadInput(
        `${owner} (orient 'split'): expected {"name", "index", "data": [...]}, got ${typeName(value)}`,
      );
    }
    const index = value.index;
    if (index !== undefined && (!Array.isArray(index) || index.length !== value.data.length)) {
      throw new BadInput(
        `${owner} (orient 'split'): "index" must be an array with one label per value in "data"`,
      );
    }
    const name = value.name;
    return {
      name: typeof name === 'string' ? name : null,
      index: (index as Label[] | undefined) ?? null,
      values: value.data,
    };
  }
  if (orient === 'table' && isPlainObject(value) && Array.isArray(value.data)) {
    const rows = value.data as unknown[];
    const index: Label[] = [];
    const values: unknown[] = [];
    rows.forEach((row, r) => {
      if (!isPlainObject(row))
        throw new BadInput(`${owner} (orient 'table'): row ${r} is ${typeName(row)}, expected an object`);
      const { index: label, ...rest } = row;
      index.push(label as Label);
      values.push(Object.values(rest)[0] ?? null);
    });
    return { name: null, index, values };
  }
  if (Array.isArray(value)) return { name: null, index: null, values: value };
  if (isPlainObject(value)) {
    const keys = Object.keys(value);
    return { name: null, index: keys.map(axisLabel), values: keys.map((k) => value[k]) };
  }
  throw new BadInput(
    `${owner} (orient '${orient}'): expected a JSON array or object, got ${typeName(value)}`,
  );
}

/** Cast to the enforced dtype (failures are 400s naming the row), else infer. */
export function typeSeries(raw: RawSeries, { dtype, enforceDtype, owner }: SeriesDecoding): DecodedSeries {
  const forced = enforceDtype && typeof dtype === 'string' ? (dtype as Dtype) : null;
  if (forced) {
    const labelOf = (r: number) => raw.index?.[r] ?? r;
    return {
      ...raw,
      dtype: forced,
      values: castColumn(raw.values, forced, { owner, column: null, labelOf }),
    };
  }
  return { ...raw, ...inferColumn(raw.values, dtype === false ? 'none' : 'infer') };
}

/** A Series request body (JSON in an orient), typed. */
export function decodeSeries(body: Buffer, how: SeriesDecoding): DecodedSeries {
  return typeSeries(seriesFromJson(parseJsonBody(body, how.owner, how.maxDepth), how), how);
}
