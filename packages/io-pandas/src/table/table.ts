import type { Dtype } from './dtype.js';

/** An axis label: pandas labels are text or integers. */
export type Label = string | number;

/**
 * A decoded table before it becomes a danfo DataFrame: columnar, each column typed. Every input format
 * (JSON orients, CSV, Parquet, gRPC) decodes into this, so typing and validation are written once.
 */
export interface Table {
  columns: string[];
  /** Row labels; null means the default 0..n-1. */
  index: Label[] | null;
  /** One array per column, values already in the column's dtype (floats use NaN for missing). */
  data: unknown[][];
  dtypes: Dtype[];
}

/** A column of raw decoded values, not typed yet (JSON values or CSV cells). */
export interface RawTable {
  columns: string[];
  index: Label[] | null;
  data: unknown[][];
}

export function rowCount(t: { data: unknown[][]; index: Label[] | null }): number {
  return t.data[0]?.length ?? t.index?.length ?? 0;
}

/** Labels that look like integers (`"0"`, `"12"`) become integers, as pandas does with axis labels. */
export function axisLabel(key: string): Label {
  return /^-?(0|[1-9]\d{0,14})$/.test(key) ? Number(key) : key;
}

/** Tuple text the way pandas prints shapes: `(2, 3)`, `(4,)`. */
export function shapeText(shape: readonly number[]): string {
  return shape.length === 1 ? `(${shape[0]},)` : `(${shape.join(', ')})`;
}

/** A short name of a JS value's type, for messages. */
export function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'object') {
    const ctor = (value as object).constructor;
    return !ctor || ctor === Object ? 'object' : ctor.name;
  }
  return typeof value;
}
