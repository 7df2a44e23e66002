import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { cpuPinning } from './cpu-pinning.js';
import { startServer, stopServer } from './servers/spawn.js';
import { type Spread, spread } from './stats.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const WIDTH = 256;
/** As in servers/batching-service.ts. */
const MAX_LATENCY_MS = 100;
const LAYERS = 4;
const ROW = JSON.stringify([Array.from({ length: WIDTH }, (_, i) => ((i * 37) % 101) / 101 - 0.5)]);

interface Run {
  rps: number;
  p99: number;
}

async function load(url: string, seconds: number, connections: number): Promise<Run> {
  const result = await autocannon({
    url,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: ROW,
    connections,
    duration: seconds,
  });
  if (result.non2xx > 0 || result.errors > 0) {
    throw new Error(`load run on ${url} failed: ${result.non2xx} non-2xx, ${result.errors} errors`);
  }
  return { rps: result.requests.average, p99: result.latency.p99 };
}

/** Per-call cost of a workload's function (ms), and the batcher's learnt cost of a full batch. */
export interface CallCosts {
  batch1: number;
  batch32: number;
  learntFullBatch: number;
}

export interface WorkloadResult {
  batchable: { rps: Spread; p99: Spread };
  single: { rps: Spread; p99: Spread };
  ratio: Spread;
  costs: CallCosts;
}

export interface BatchingResult {
  /** One 256×256 layer as a bare matMul. */
  dense: WorkloadResult;
  /** A tf.sequential model of dense 256-wide layers, called with model.predict. */
  mlp: WorkloadResult;
  maxLatencyMs: number;
  layers: number;
  pinning: string;
}

const WORKLOADS = ['dense', 'mlp'] as const;

/**
 * Throughput and p99 latency at 64 concurrent single-row clients of each workload served batchable against
 * the same function not batchable (one server process for all), runs alternated after a warm-up.
 */
export async function benchBatching({
  seconds = 5,
  connections = 64,
  rounds = 3,
} = {}): Promise<BatchingResult> {
  const pinning = cpuPinning();
  const server = await startServer(
    ['--import', 'tsx', join(HERE, 'servers', 'batching-service.ts')],
    pinning.serverPrefix,
  );
  const unpin = pinning.pinLoadGenerator();
  try {
    const results = {} as Record<(typeof WORKLOADS)[number], WorkloadResult>;
    for (const name of WORKLOADS) {
      const batchable = `${server.url}/${name}`;
      const single = `${server.url}/${name}_one`;
      const a = await (await fetch(batchable, { method: 'POST', body: ROW })).text();
      const b = await (await fetch(single, { method: 'POST', body: ROW })).text();
      if (a !== b) throw new Error(`${name}: batchable and single answers differ`);
      await load(batchable, 2, connections);
      await load(single, 2, connections);
      const runs = { batchable: [] as Run[], single: [] as Run[] };
      for (let i = 0; i < rounds; i++) {
        runs.batchable.push(await load(batchable, seconds, connections));
        runs.single.push(await load(single, seconds, connections));
      }
      const summary = (r: Run[]) => ({ rps: spread(r.map((x) => x.rps)), p99: spread(r.map((x) => x.p99)) });
      results[name] = {
        batchable: summary(runs.batchable),
        single: summary(runs.single),
        ratio: spread(runs.batchable.map((r, i) => r.rps / runs.single[i]!.rps)),
        costs: { batch1: Number.NaN, batch32: Number.NaN, learntFullBatch: Number.NaN },
      };
    }
    const costs = (await (await fetch(`${server.url}/costs`, { method: 'POST', body: '' })).json()) as Record<
      (typeof WORKLOADS)[number],
      CallCosts
    >;
    for (const name of WORKLOADS) results[name].costs = costs[name];
    return { ...results, maxLatencyMs: MAX_LATENCY_MS, layers: LAYERS, pinning: pinning.description };
  } finally {
    unpin();
    await stopServer(server.child);
  }
}
