// `pnpm fuzz [--requests N] [--duration S] [--seed K] [--concurrency C] [--grpc-share F] [--slow N] [--load N]`
// Long fuzz runs against a fresh target server; prints counts by status, findings, hangs and memory.
// `--load N` sends N more requests afterwards and reports the server's RSS before and after them;
// `--duration S` caps each phase at S seconds.
import { parseArgs } from 'node:util';
import { type FuzzReport, fuzz } from './run.js';
import { slowClients } from './slow-clients.js';
import { startTarget } from './target.js';

const USAGE = `Usage: pnpm fuzz [options]

Fuzzes a fresh target server (HTTP, gRPC, the v2 routes) and prints counts by status, findings, hangs and memory.

Options:
  -n, --requests <N>     requests to send (default 10000)
  -d, --duration <S>     cap each phase at S seconds
  --seed <K>             random seed (default: from the clock; printed, so a run can be repeated)
  --concurrency <C>      requests in flight (default 8)
  --grpc-share <F>       share of the requests sent over gRPC, 0 to 1 (default 0.1)
  --slow <N>             also N slow clients during the run (slow reads and bodies, partial gRPC
                         messages, unread event streams), 8 at a time (default 100)
  --load <N>             then N more requests, with the server's RSS before and after (default 0)
  -h, --help             this help
`;

function parseFlags() {
  try {
    return parseArgs({
      options: {
        requests: { type: 'string', short: 'n', default: '10000' },
        duration: { type: 'string', short: 'd' },
        seed: { type: 'string', default: String(Date.now() % 1_000_000) },
        concurrency: { type: 'string', default: '8' },
        'grpc-share': { type: 'string', default: '0.1' },
        slow: { type: 'string', default: '100' },
        load: { type: 'string', default: '0' },
        help: { type: 'boolean', short: 'h' },
      },
    }).values;
  } catch (err) {
    // A mistyped flag is one line and the usage, not a stack trace.
    process.stderr.write(`fuzz: ${(err as Error).message}\n\n${USAGE}`);
    process.exit(2);
  }
}

const values = parseFlags();
if (values.help) {
  process.stdout.write(USAGE);
  process.exit(0);
}

const mb = (bytes: number | null) => (bytes === null ? 'n/a' : `${(bytes / 1024 / 1024).toFixed(1)} MB`);

function print(title: string, report: FuzzReport): void {
  console.log(`\n${title}: ${report.sent} requests in ${report.seconds.toFixed(1)} s`);
  console.log('  HTTP by status:', JSON.stringify(report.http));
  console.log('  gRPC by code:  ', JSON.stringify(report.grpc));
  console.log(`  slowest answer: ${report.slowestMs.toFixed(0)} ms`);
  console.log(`  findings (5xx, INTERNAL/UNKNOWN/UNAVAILABLE, hangs): ${report.findings.length}`);
  for (const f of report.findings.slice(0, 20)) console.log(`    ${f.outcome}  ${f.what}`);
}

const target = await startTarget();
const seed = Number(values.seed);
const common = { seed, concurrency: Number(values.concurrency), grpcShare: Number(values['grpc-share']) };
console.log(`fuzz target pid ${target.pid}, seed ${seed}, RSS at start ${mb(target.rss())}`);
let failed = false;
try {
  const [report, slow] = await Promise.all([
    fuzz(target, {
      ...common,
      requests: Number(values.requests),
      durationS: values.duration ? Number(values.duration) : undefined,
    }),
    slowClients(target, { cases: Number(values.slow), seed }),
  ]);
  print('fuzz', report);
  console.log(`\nslow clients: ${slow.sent}, outcomes ${JSON.stringify(slow.outcomes)}`);
  console.log(`  findings (5xx, INTERNAL/UNKNOWN): ${slow.findings.length}`);
  for (const f of slow.findings.slice(0, 20)) console.log(`    ${f.outcome}  ${f.what}`);
  failed = report.findings.length > 0 || slow.findings.length > 0;
  console.log(`  kinds: ${JSON.stringify(report.kinds)}`);
  const load = Number(values.load);
  if (load > 0 && !target.exit) {
    const before = target.rss();
    const again = await fuzz(target, {
      ...common,
      seed: seed + 1_000_003,
      requests: load,
      durationS: values.duration ? Number(values.duration) : undefined,
    });
    const after = target.rss();
    print('follow-up load', again);
    console.log(`  RSS before ${mb(before)}, after ${mb(after)}, change ${mb((after ?? 0) - (before ?? 0))}`);
    failed ||= again.findings.length > 0;
  }
} finally {
  if (target.exit) {
    failed = true;
    console.log(
      `\nCRASH: the target exited (${JSON.stringify(target.exit)}):\n${target.stderr().slice(-4000)}`,
    );
  } else {
    const res = await fetch(`http://127.0.0.1:${target.httpPort}/livez`).catch(() => null);
    console.log(`\ntarget alive: /livez ${res?.status ?? 'no answer'}; RSS ${mb(target.rss())}`);
    if (res?.status !== 200) failed = true;
    await target.stop();
  }
  // Errors the server logged, and gRPC inputs a decoder failed on with an error of its own (src/server.ts).
  const errors = target.stderr().split('\n').filter(Boolean);
  console.log(`server error log lines: ${errors.length}`);
  for (const line of errors.slice(0, 5)) console.log(`    ${line.slice(0, 400)}`);
  if (errors.length > 0) failed = true;
}
process.exit(failed ? 1 : 0);
