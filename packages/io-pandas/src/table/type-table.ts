import { BadInput } from '@tiffin/core';
import { truncateForMessage } from '@tiffin/core/descriptor';
import { inferCsvColumn } from '../formats/csv.js';
import type { Dtype } from './dtype.js';
import type { ResolvedDtype } from './options.js';
import type { RawTable, Table } from './table.js';
import { type CastSite, castColumn, inferColumn, type TypedColumn } from './typing.js';

export interface TypingPolicy {
  dtype: ResolvedDtype;
  enforceDtype: boolean;
  owner: string;
  /** CSV cells are text: inference reads numbers/booleans out of them. */
  source: 'json' | 'csv';
}

/** The dtype a column must be cast to, or null to infer. Only enforced dtypes are applied (docs/spec/io-descriptors.md §3.3). */
export function forcedDtype(policy: TypingPolicy, column: string): Dtype | null {
  if (!policy.enforceDtype) return null;
  const d = policy.dtype;
  if (d === null || typeof d === 'boolean') return null;
  if (typeof d === 'string') return d;
  return d[column] ?? null;
}

/** Type every column: cast where the descriptor enforces a dtype (failures are 400s), else infer. */
export function typeRawTable(raw: RawTable, policy: TypingPolicy): Table {
  const labelOf = (r: number) => raw.index?.[r] ?? r;
  const dtypes: Dtype[] = [];
  const data: unknown[][] = [];
  raw.columns.forEach((column, c) => {
    const values = raw.data[c]!;
    const forced = forcedDtype(policy, column);
    let typed: TypedColumn;
    if (forced) {
      const site: CastSite = { owner: policy.owner, column, labelOf };
      typed = { dtype: forced, values: castColumn(values, forced, site) };
    } else if (policy.source === 'csv') typed = inferCsvColumn(values);
    else typed = inferColumn(values, policy.dtype === false ? 'none' : 'infer');
    dtypes.push(typed.dtype);
    data.push(typed.values);
  });
  return { columns: raw.columns, index: raw.index, data, dtypes };
}

/**
 * With `enforce_dtype`, every column a `dtype` map names must be in the frame (JSON, CSV and Parquet alike):
 * a missing one is the client's mistake, named in a 400, not a failure in the API function later.
 */
export function requireDeclaredColumns(
  columns: readonly string[],
  dtype: TypingPolicy['dtype'],
  enforceDtype: boolean,
  owner: string,
): void {
  if (!enforceDtype || dtype === null || typeof dtype !== 'object') return;
  const present = new Set(columns);
  const missing = Object.keys(dtype).filter((name) => !present.has(name));
  if (missing.length === 0) return;
  const names = missing.map((name) => JSON.stringify(truncateForMessage(name))).join(', ');
  throw new BadInput(
    `${owner}: missing column${missing.length > 1 ? 's' : ''} ${names} named in 'dtype' (enforce_dtype is on)`,
  );
}
