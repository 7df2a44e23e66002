/**
 * 100k rows x 5 columns: records JSON → DataFrame → records JSON, and the same through Parquet, with
 * PandasDataFrame (danfojs-node) against pandas (read_json/to_json) in the same run. Prints ratios
 * (pandas time / ours: > 1 means we are faster) and where our time goes.
 * Run: pnpm bench (in packages/io-pandas).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BufferedHttpRequest, readResponseBody } from '@tiffin/core/internal';
import { frameView, tableToDanfo } from '../src/danfo/convert.js';
import { parseJsonBody, rawTableFromJson } from '../src/formats/json-parse.js';
import { frameToJson } from '../src/formats/json-write.js';
import { loadDanfo, PandasDataFrame } from '../src/index.js';
import { typeRawTable } from '../src/table/type-table.js';

const ROWS = 100_000;
const REPEATS = 5;

function best(fn: () => unknown): number {
  let min = Infinity;
  for (let i = 0; i < REPEATS; i++) {
    const t = performance.now();
    fn();
    min = Math.min(min, performance.now() - t);
  }
  return min;
}
async function bestAsync(fn: () => Promise<unknown>): Promise<number> {
  let min = Infinity;
  for (let i = 0; i < REPEATS; i++) {
    const t = performance.now();
    await fn();
    min = Math.min(min, performance.now() - t);
  }
  return min;
}

const records = Array.from({ length: ROWS }, (_, i) => ({
  id: i,
  value: i * 0.25 + 0.1,
  name: `name-${i % 1000}`,
  flag: i % 3 === 0,
  count: (i * 7) % 101,
}));
const body = Buffer.from(JSON.stringify(records));
const t0 = performance.now();
const dfd = await loadDanfo();
const importMs = performance.now() - t0;

const jsonDesc = new PandasDataFrame({ orient: 'records' });
const parquetDesc = new PandasDataFrame({ default_format: 'parquet' });
const req = (b: Buffer, ct: string) => new BufferedHttpRequest({ headers: { 'content-type': ct }, body: b });

const jsonRead = await bestAsync(() => jsonDesc.fromHttpRequest(req(body, 'application/json')));
const df = await jsonDesc.fromHttpRequest(req(body, 'application/json'));
const jsonWrite = await bestAsync(() => jsonDesc.toHttpResponse(df, null));
const parquetBytes = await readResponseBody(await parquetDesc.toHttpResponse(df, null));
const parquetWrite = await bestAsync(() => parquetDesc.toHttpResponse(df, null));
const parquetRead = await bestAsync(() =>
  parquetDesc.fromHttpRequest(req(parquetBytes, 'application/vnd.apache.parquet')),
);

// Where the JSON time goes.
const policy = { dtype: null, enforceDtype: false, owner: 'bench', source: 'json' as const };
const parseMs = best(() => parseJsonBody(body, 'bench'));
const parsed = parseJsonBody(body, 'bench');
const layoutMs = best(() => rawTableFromJson(parsed, 'records', 'bench'));
const typeMs = best(() => typeRawTable(rawTableFromJson(parsed, 'records', 'bench'), policy));
const table = typeRawTable(rawTableFromJson(parsed, 'records', 'bench'), policy);
const danfoMs = best(() => tableToDanfo(dfd, table, 'bench'));
const writeJsonMs = best(() => frameToJson(frameView(df), 'records'));

const fmt = (n: number) => `${n.toFixed(1)} ms`;
console.log(
  `io-pandas bench: ${ROWS} rows x 5 columns, best of ${REPEATS} (danfojs-node import ${fmt(importMs)}, once)`,
);
console.log(
  `  JSON    read ${fmt(jsonRead)}  write ${fmt(jsonWrite)}  (body ${(body.length / 1e6).toFixed(1)} MB)`,
);
console.log(
  `  Parquet read ${fmt(parquetRead)}  write ${fmt(parquetWrite)}  (file ${(parquetBytes.length / 1e6).toFixed(2)} MB)`,
);
console.log(
  `  JSON read breakdown: JSON.parse ${fmt(parseMs)}, records→columns ${fmt(layoutMs)}, + typing ${fmt(typeMs - layoutMs)}, danfo DataFrame ${fmt(danfoMs)}; write ${fmt(writeJsonMs)}`,
);

const python = ['/usr/bin/python3', 'python3'].find((p) => (p.startsWith('/') ? existsSync(p) : true))!;
let baseline: Record<string, number | string> | null = null;
try {
  const dir = mkdtempSync(join(tmpdir(), 'io-pandas-bench-'));
  const file = join(dir, 'records.json');
  writeFileSync(file, body);
  const out = execFileSync(python, [join(import.meta.dirname, 'pandas_baseline.py'), file, String(REPEATS)], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  baseline = JSON.parse(out) as Record<string, number | string>;
} catch (err) {
  console.log(
    `  SKIP pandas baseline: python3 with pandas is not available (${(err as Error).message.split('\n')[0]})`,
  );
}
if (baseline) {
  const ratio = (theirs: unknown, ours: number) =>
    typeof theirs === 'number' ? `${(theirs / ours).toFixed(2)}x` : 'n/a';
  const pj = Number(baseline.json_read_ms) + Number(baseline.json_write_ms);
  console.log(
    `  pandas ${baseline.pandas}: read_json ${fmt(Number(baseline.json_read_ms))}, to_json ${fmt(Number(baseline.json_write_ms))}`,
  );
  console.log(
    `  ratio (pandas/ours, >1 = faster): JSON read ${ratio(baseline.json_read_ms, jsonRead)}, JSON write ${ratio(baseline.json_write_ms, jsonWrite)}, JSON round trip ${ratio(pj, jsonRead + jsonWrite)}`,
  );
  if (typeof baseline.parquet_read_ms === 'number') {
    const pp = Number(baseline.parquet_read_ms) + Number(baseline.parquet_write_ms);
    console.log(
      `  pandas parquet: read ${fmt(Number(baseline.parquet_read_ms))}, write ${fmt(Number(baseline.parquet_write_ms))}; round trip ratio ${ratio(pp, parquetRead + parquetWrite)}`,
    );
  } else {
    console.log(`  SKIP pandas parquet baseline: ${baseline.parquet}`);
  }
}
