import type { ResolvedDtype } from '../table/options.js';
import type { Orient } from '../table/orient.js';
import type { Table } from '../table/table.js';
import { typeRawTable } from '../table/type-table.js';
import { rawTableFromCsv } from './csv.js';
import type { Format } from './format.js';
import { parseJsonBody, rawTableFromJson } from './json-parse.js';
import { tableFromParquet } from './parquet.js';

/** What decoding a body needs from the descriptor and the server's limits (structured-cloneable). */
export interface TableDecoding {
  format: Format;
  orient: Orient;
  dtype: ResolvedDtype;
  enforceDtype: boolean;
  owner: string;
  maxDepth: number;
  maxElements: number;
  maxValuesPerByte: number;
}

/** A request body (Parquet, CSV or JSON in an orient) as a typed table; bad input is a 400, too many cells a 413. */
export async function decodeTable(body: Buffer, how: TableDecoding): Promise<Table> {
  const { format, owner, maxDepth, maxElements } = how;
  if (format === 'parquet') return tableFromParquet(body, owner, maxElements, how.maxValuesPerByte);
  const policy = { dtype: how.dtype, enforceDtype: how.enforceDtype, owner };
  if (format === 'csv')
    return typeRawTable(rawTableFromCsv(body, owner, maxElements), { ...policy, source: 'csv' });
  const raw = rawTableFromJson(parseJsonBody(body, owner, maxDepth), how.orient, owner, maxElements);
  return typeRawTable(raw, { ...policy, source: 'json' });
}
