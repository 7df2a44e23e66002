/**
 * Zero-code ONNX serving against a hand-written server: `tiffin serve model.onnx` (one runner instance in a
 * worker thread, batched and not; and `--instances 0`, the model on the event loop) and a plain node:http +
 * onnxruntime-node server on the main thread (`servers/plain-onnx-server.ts`), both answering `POST /predict`
 * with the same JSON and writing the same access line. A control, the plain server with its model moved to one
 * worker thread by hand (`servers/plain-onnx-threaded-server.ts`), shows what the thread itself costs. 64
 * connections, each sending one row; `/livez` probed every 10 ms during each run. Two placements: the server
 * pinned to one CPU and the load generator to another, and both left to the OS (the cores shared).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { type CpuPinning, cpuPinning } from './cpu-pinning.js';
import { mlpModel } from './servers/onnx-mlp.js';
import { startServer, stopServer } from './servers/spawn.js';
import { cpuSeconds, loadAverage, type Spread, spread } from './stats.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const CONNECTIONS = 64;

/** The two models served: one where JSON costs as much as the model, one where batching pays. */
export const ZERO_CODE_WORKLOADS = {
  /** Two dense 1024-wide layers, 1024 floats in and out: about 0.5 ms a call, as much JSON as model work. */
  light: { inWidth: 1024, hidden: 1024, layers: 2, outWidth: 1024 },
  /** 64 floats in, four layers 3072 wide, 16 out (76 MB of weights): a row streams every weight, a batch shares them. */
  heavy: { inWidth: 64, hidden: 3072, layers: 4, outWidth: 16 },
} as const;
export type ZeroCodeWorkload = keyof typeof ZERO_CODE_WORKLOADS;

interface Run {
  rps: number;
  p99: number;
  livezP99: number;
  /**
   * Server CPU (all its threads, user + system) per answered `/predict` request, µs: less swayed by other load
   * than req/s. It includes the `/livez` probes' CPU (at most 100 a second, tens of µs each).
   */
  cpuUs: number;
}

export interface ServerFigures {
  rps: Spread;
  p99: Spread;
  livezP99: Spread;
  cpuUs: Spread;
}

export interface ZeroCodeResult {
  plain: ServerFigures;
  /** The control: the plain server with the model on one worker thread, written by hand. */
  threaded: ServerFigures;
  unbatched: ServerFigures;
  /** Not batched, the model on the event loop (`--instances 0`): no thread hop, no liveness while it runs. */
  inline: ServerFigures;
  batched: ServerFigures;
  /** Per round, tiffin / plain. */
  unbatchedRatio: Spread;
  inlineRatio: Spread;
  batchedRatio: Spread;
  threadedRatio: Spread;
}

/** Where the servers run: pinned to one CPU (the load generator on another), or wherever the OS puts them. */
export type Placement = 'pinned' | 'shared';

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

/** `/livez` latencies (ms) measured one after another, 10 ms apart, until `stop` resolves. */
async function probeLivez(url: string, stop: Promise<unknown>): Promise<number[]> {
  let stopped = false;
  stop.then(() => {
    stopped = true;
  });
  const times: number[] = [];
  while (!stopped) {
    const t0 = performance.now();
    const res = await fetch(`${url}/livez`);
    await res.arrayBuffer();
    times.push(performance.now() - t0);
    await new Promise((r) => setTimeout(r, 10));
  }
  return times;
}

async function load(url: string, pid: number, seconds: number, body: string): Promise<Run> {
  const cpuBefore = cpuSeconds(pid);
  const run = autocannon({
    url: `${url}/predict`,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
    connections: CONNECTIONS,
    duration: seconds,
  });
  const livez = probeLivez(url, run);
  const result = await run;
  if (result.non2xx > 0 || result.errors > 0)
    throw new Error(
      `load run on ${url} failed: ${result.non2xx} non-2xx, ${result.errors} errors (${JSON.stringify(result.statusCodeStats)})`,
    );
  const livezTimes = await livez;
  return {
    rps: result.requests.average,
    p99: result.latency.p99,
    livezP99: percentile(livezTimes, 99),
    cpuUs: ((cpuSeconds(pid) - cpuBefore) * 1e6) / result.requests.total,
  };
}

export interface PlacementResults {
  placement: Placement;
  /** For the printout. */
  description: string;
  results: Record<ZeroCodeWorkload, ZeroCodeResult>;
  /** The load average when this placement's runs ended. */
  loadAverage: string;
}

const SHARED: CpuPinning = {
  serverPrefix: [],
  description: 'unpinned: server threads and load generator share the CPUs',
  pinLoadGenerator: () => () => {},
};

/**
 * Both placements by default (`BENCH_ONNX_PLACEMENT=pinned` or `shared` picks one). Pinned is the usual
 * loopback set-up; on a two-CPU machine it leaves the server one CPU, where a runner thread can only take turns
 * with the event loop. Shared lets the OS run the thread beside the event loop, as a deployed server would.
 */
export async function benchZeroCodeOnnx({
  seconds,
  rounds,
}: {
  seconds: number;
  rounds: number;
}): Promise<PlacementResults[]> {
  const pinning = cpuPinning();
  const wanted = process.env.BENCH_ONNX_PLACEMENT;
  const placements: [Placement, CpuPinning][] = [];
  if (pinning.serverPrefix.length > 0 && wanted !== 'shared') placements.push(['pinned', pinning]);
  if (wanted !== 'pinned' || placements.length === 0) placements.push(['shared', SHARED]);
  const out: PlacementResults[] = [];
  for (const [placement, cpus] of placements) {
    const results = {} as Record<ZeroCodeWorkload, ZeroCodeResult>;
    for (const name of Object.keys(ZERO_CODE_WORKLOADS) as ZeroCodeWorkload[])
      results[name] = await benchWorkload(name, seconds, rounds, cpus);
    out.push({ placement, description: cpus.description, results, loadAverage: loadAverage() });
  }
  return out;
}

async function benchWorkload(
  workload: ZeroCodeWorkload,
  seconds: number,
  rounds: number,
  pinning: CpuPinning,
): Promise<ZeroCodeResult> {
  const shape = ZERO_CODE_WORKLOADS[workload];
  const dir = await mkdtemp(join(tmpdir(), 'tiffin-bench-onnx-'));
  const model = join(dir, `${workload}.onnx`);
  await writeFile(model, mlpModel(shape.inWidth, shape.hidden, shape.layers, shape.outWidth));
  const require = createRequire(import.meta.url);
  const bin = join(dirname(require.resolve('@tiffin/cli/package.json')), 'dist', 'bin.js');
  const tiffin = (instances: number, extra: string[]) => [
    bin,
    'serve',
    model,
    '--port',
    '0',
    '--instances',
    String(instances),
    '--threads',
    '1',
    '--max-concurrency',
    '100000',
    ...extra,
  ];
  const servers = {
    plain: ['--import', 'tsx', join(HERE, 'servers', 'plain-onnx-server.ts'), model],
    threaded: ['--import', 'tsx', join(HERE, 'servers', 'plain-onnx-threaded-server.ts'), model],
    unbatched: tiffin(1, ['--no-batching']),
    inline: tiffin(0, ['--no-batching']),
    // A latency budget no run reaches: the comparison is of throughput, not of shedding (503) under overload.
    batched: tiffin(1, ['--max-batch-size', '32', '--max-latency-ms', '2000']),
  } as const;
  type Name = keyof typeof servers;
  const names = Object.keys(servers) as Name[];
  const row = Array.from({ length: shape.inWidth }, (_, i) => ((i * 37) % 101) / 101 - 0.5);
  const body = JSON.stringify([row]);
  const runs: Record<Name, Run[]> = { plain: [], threaded: [], unbatched: [], inline: [], batched: [] };
  const restore = pinning.pinLoadGenerator();
  try {
    for (let round = 0; round <= rounds; round++) {
      for (const name of names) {
        const { url, child } = await startServer(servers[name], pinning.serverPrefix);
        try {
          // Round 0 warms up (JIT, ORT's first runs, the batcher's cost model) and is not counted.
          const run = await load(url, child.pid as number, round === 0 ? 1 : seconds, body);
          if (round > 0) runs[name].push(run);
        } finally {
          await stopServer(child);
        }
      }
    }
  } finally {
    restore();
    await rm(dir, { recursive: true, force: true });
  }
  const summary = (name: Name) => ({
    rps: spread(runs[name].map((r) => r.rps)),
    p99: spread(runs[name].map((r) => r.p99)),
    livezP99: spread(runs[name].map((r) => r.livezP99)),
    cpuUs: spread(runs[name].map((r) => r.cpuUs)),
  });
  const ratio = (name: Name) => spread(runs[name].map((r, i) => r.rps / runs.plain[i]!.rps));
  return {
    plain: summary('plain'),
    threaded: summary('threaded'),
    unbatched: summary('unbatched'),
    inline: summary('inline'),
    batched: summary('batched'),
    unbatchedRatio: ratio('unbatched'),
    inlineRatio: ratio('inline'),
    batchedRatio: ratio('batched'),
    threadedRatio: ratio('threaded'),
  };
}
