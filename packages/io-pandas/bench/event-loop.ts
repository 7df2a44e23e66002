/**
 * Issue 32: how long one large table request holds the event loop. A live server (this process, pinned by the
 * caller to one core) answers PandasDataFrame APIs two ways, alternated in the same run:
 *   - `on_loop`: the decoding as it was (parse + type on the event loop, danfo's own transpose);
 *   - `off_loop`: as shipped (decoding in a worker thread, rows built in slices, danfo given the columns).
 * A client process (pinned to another core) posts 4 M-cell bodies (Parquet, CSV, JSON and a padded RLE Parquet
 * file) while it asks /livez every 10 ms; an idle round (no table, /livez only) gives the machine's own noise.
 * Reported per variant and body: the event-loop delay histogram's p99 and max (perf_hooks.monitorEventLoopDelay)
 * and the slowest /livez, min/median/max over the rounds.
 * Run: taskset -c 0 node --conditions=source --import tsx bench/event-loop.ts [rounds] [client core]
 */
import { spawn } from 'node:child_process';
import { loadavg } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { HttpRequest } from '@tiffin/core';
import { BadInput, JSONDescriptor, Service, serve } from '@tiffin/core';
import { parquetRleBomb } from '../../fuzz/src/declared-sizes.js';
import { requestFormat } from '../src/formats/format.js';
import { frameToParquet } from '../src/formats/parquet.js';
import { loadDanfo, PandasDataFrame } from '../src/index.js';
import { toDanfoDtype } from '../src/table/dtype.js';

const ROUNDS = Number(process.argv[2] ?? 3);
const CLIENT_CORE = process.argv[3] ?? '1';
const ROWS = 1_000_000;

/** The path before this change: decoded on the event loop, and danfo transposing the rows itself. */
class OnLoopDataFrame extends PandasDataFrame {
  override async fromHttpRequest(request: HttpRequest) {
    const dfd = await loadDanfo();
    const table = await this.decode(
      await request.body(),
      requestFormat(request.contentType, 'json'),
      request.limits,
    );
    const n = table.data[0]?.length ?? 0;
    const rows = Array.from({ length: n }, (_, r) => table.data.map((c) => c[r]));
    try {
      return new dfd.DataFrame(rows, { columns: table.columns, dtypes: table.dtypes.map(toDanfoDtype) });
    } catch (err) {
      throw new BadInput((err as Error).message);
    }
  }
}

const svc = new Service('event_loop_bench');
for (const [name, input] of [
  ['on_loop', new OnLoopDataFrame({ orient: 'records' })],
  ['off_loop', new PandasDataFrame({ orient: 'records' })],
] as const) {
  svc.api({ name, input, output: new JSONDescriptor() }, (df) => ({
    shape: (df as { shape: number[] }).shape,
  }));
}

const columns = ['a', 'b', 'c', 'd'];
const rows = Array.from({ length: ROWS }, (_, r) => [r * 0.5, r * 1.5, r, r % 7]);
const bodies: Record<string, { type: string; body: Buffer }> = {
  parquet: {
    type: 'application/vnd.apache.parquet',
    body: Buffer.from(
      frameToParquet({
        columns,
        index: Array.from({ length: ROWS }, (_, i) => i),
        dtypes: ['float64', 'float64', 'int64', 'int64'],
        rows,
      }),
    ),
  },
  csv: { type: 'text/csv', body: Buffer.from(`a,b,c,d\n${rows.map((r) => r.join(',')).join('\n')}`) },
  json: {
    type: 'application/json',
    body: Buffer.from(JSON.stringify(rows.map(([a, b, c, d]) => ({ a, b, c, d })))),
  },
  parquet_rle: {
    type: 'application/vnd.apache.parquet',
    body: parquetRleBomb({ footerRows: 4 * ROWS, pageValues: 4 * ROWS, padding: (4 * ROWS) / 16 }),
  },
};

const server = await serve(svc, { port: 0, maxBodySize: 64 * 2 ** 20, handleSignals: false, logger: false });

/** The client: posts `body` twice while probing /livez; prints the slowest /livez and the answers. */
const CLIENT = `
const [url, api, type, file] = process.argv.slice(1);
const body = require('node:fs').readFileSync(file);
// A fresh connection each time: a server that was blocked past its keep-alive timeout resets idle ones.
const get = (path, init = {}) => fetch(url + path, { ...init, headers: { ...init.headers, connection: 'close' } });
(async () => {
  let running = true, livezMax = 0;
  const prober = (async () => {
    while (running) {
      const t = performance.now();
      await (await get('/livez')).arrayBuffer();
      livezMax = Math.max(livezMax, performance.now() - t);
      await new Promise((r) => setTimeout(r, 10));
    }
  })();
  const statuses = [];
  // 'idle': no table at all, only /livez for 3 s: the loop's delay from the machine's load alone.
  if (api === 'idle') await new Promise((r) => setTimeout(r, 3000));
  else for (let i = 0; i < 2; i++) {
    const res = await get('/' + api, { method: 'POST', headers: { 'content-type': type }, body });
    statuses.push(res.status + ' ' + (await res.text()).slice(0, 60));
  }
  running = false;
  await prober;
  console.log(JSON.stringify({ livezMax, statuses }));
})();
`;

import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const dir = mkdtempSync(join(tmpdir(), 'tiffin-event-loop-'));
const files = Object.fromEntries(
  Object.entries(bodies).map(([name, { body }]) => {
    const file = join(dir, name);
    writeFileSync(file, body);
    return [name, file];
  }),
);

function client(api: string, name: string): Promise<{ livezMax: number; statuses: string[] }> {
  return new Promise((resolve, reject) => {
    const child = spawn('taskset', [
      '-c',
      CLIENT_CORE,
      process.execPath,
      '-e',
      CLIENT,
      server.url,
      api,
      bodies[name]!.type,
      files[name]!,
    ]);
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => process.stderr.write(d));
    child.on('exit', () => (out ? resolve(JSON.parse(out)) : reject(new Error('client failed'))));
  });
}

const figures: Record<string, { p99: number[]; max: number[]; livez: number[] }> = {};
const histogram = monitorEventLoopDelay({ resolution: 5 });
histogram.enable();
const load: number[] = [];
for (let round = 0; round < ROUNDS; round++) {
  histogram.reset();
  const idle = await client('idle', 'csv');
  figures['- idle'] ??= { p99: [], max: [], livez: [] };
  figures['- idle'].p99.push(histogram.percentile(99) / 1e6);
  figures['- idle'].max.push(histogram.max / 1e6);
  figures['- idle'].livez.push(idle.livezMax);
  for (const name of Object.keys(bodies)) {
    const order = round % 2 === 0 ? ['on_loop', 'off_loop'] : ['off_loop', 'on_loop'];
    for (const api of order) {
      histogram.reset();
      const { livezMax, statuses } = await client(api, name);
      const key = `${name} ${api}`;
      figures[key] ??= { p99: [], max: [], livez: [] };
      figures[key].p99.push(histogram.percentile(99) / 1e6);
      figures[key].max.push(histogram.max / 1e6);
      figures[key].livez.push(livezMax);
      if (round === 0) console.log(`${key}: ${statuses.join(' | ')}`);
    }
  }
  load.push(loadavg()[0]!);
}
histogram.disable();
await server.close();

const mmm = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return `${s[0]!.toFixed(0)}/${s[Math.floor(s.length / 2)]!.toFixed(0)}/${s[s.length - 1]!.toFixed(0)}`;
};
console.log(
  `\nbodies: ${Object.entries(bodies)
    .map(([n, b]) => `${n} ${(b.body.length / 2 ** 20).toFixed(2)} MB`)
    .join(', ')}; ${4 * ROWS} cells each`,
);
console.log(`load average during rounds: ${load.map((l) => l.toFixed(1)).join(', ')}`);
console.log('| body | variant | loop delay p99 ms (min/med/max) | loop delay max ms | slowest /livez ms |');
console.log('|---|---|---|---|---|');
for (const [key, f] of Object.entries(figures)) {
  const [body, api] = key.split(' ');
  console.log(`| ${body} | ${api} | ${mmm(f.p99)} | ${mmm(f.max)} | ${mmm(f.livez)} |`);
}
process.exit(0);
