import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { cpuPinning } from './cpu-pinning.js';
import { startServer, stopServer } from './servers/spawn.js';
import { type Spread, spread } from './stats.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const WIDTH = 256;
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

export interface BatchingResult {
  batchable: { rps: Spread; p99: Spread };
  single: { rps: Spread; p99: Spread };
  ratio: Spread;
  /** The server's learnt cost of a full batch (ms) at the end, and the budget. */
  batchCostMs: number;
  maxLatencyMs: number;
  pinning: string;
}

/**
 * Throughput and p99 latency of a dense 256×256 layer at 64 concurrent single-row clients, the API batchable
 * against the same API not batchable, runs alternated after a warm-up.
 */
export async function benchBatching({
  seconds = 5,
  connections = 64,
  rounds = 3,
} = {}): Promise<BatchingResult> {
  const pinning = cpuPinning();
  const server = await startServer(
    ['--import', 'tsx', join(HERE, 'servers', 'dense-service.ts')],
    pinning.serverPrefix,
  );
  const unpin = pinning.pinLoadGenerator();
  try {
    const batchable = `${server.url}/dense`;
    const single = `${server.url}/dense_one`;
    const a = await (await fetch(batchable, { method: 'POST', body: ROW })).text();
    const b = await (await fetch(single, { method: 'POST', body: ROW })).text();
    if (a !== b) throw new Error('batchable and single answers differ');
    await load(batchable, 2, connections);
    await load(single, 2, connections);
    const runs = { batchable: [] as Run[], single: [] as Run[] };
    for (let i = 0; i < rounds; i++) {
      runs.batchable.push(await load(batchable, seconds, connections));
      runs.single.push(await load(single, seconds, connections));
    }
    const cost = Number(await (await fetch(`${server.url}/batch_cost`, { method: 'POST', body: '' })).text());
    const summary = (r: Run[]) => ({ rps: spread(r.map((x) => x.rps)), p99: spread(r.map((x) => x.p99)) });
    return {
      batchable: summary(runs.batchable),
      single: summary(runs.single),
      ratio: spread(runs.batchable.map((r, i) => r.rps / runs.single[i]!.rps)),
      batchCostMs: cost,
      maxLatencyMs: 100,
      pinning: pinning.description,
    };
  } finally {
    unpin();
    await stopServer(server.child);
  }
}
