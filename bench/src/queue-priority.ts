import { Agent, request } from 'node:http';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cpuPinning } from './cpu-pinning.js';
import { startServer, stopServer } from './servers/spawn.js';
import { type Spread, spread } from './stats.js';

const SERVER = join(dirname(fileURLToPath(import.meta.url)), 'servers', 'tiffin-priority.ts');

/** One call's latency in milliseconds, and its status. */
function post(agent: Agent, url: URL, priority: string | undefined): Promise<{ ms: number; status: number }> {
  const start = performance.now();
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { 'content-type': 'application/json', 'content-length': '3' };
    if (priority) headers.priority = priority;
    const req = request(url, { method: 'POST', agent, headers }, (res) => {
      res.resume();
      res.on('end', () => resolve({ ms: performance.now() - start, status: res.statusCode ?? 0 }));
    });
    req.on('error', reject);
    req.end('[1]');
  });
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

interface Round {
  p50: number;
  p99: number;
  highCalls: number;
  lowRps: number;
}

/**
 * `lowClients` connections call back to back with `u=7` (or no Priority header at all), more than the API's
 * `concurrency` serves, so its queue stays full; one connection calls with `u=0` (or none) meanwhile and its
 * latencies are the figures.
 */
async function round(url: URL, seconds: number, lowClients: number, priorities: boolean): Promise<Round> {
  const agent = new Agent({ keepAlive: true, maxSockets: lowClients + 1 });
  const end = performance.now() + seconds * 1000;
  let lowDone = 0;
  const low = Array.from({ length: lowClients }, async () => {
    while (performance.now() < end) {
      await post(agent, url, priorities ? 'u=7' : undefined);
      lowDone++;
    }
  });
  const high: number[] = [];
  // The queue fills first: the high-priority caller starts once the low ones had a moment.
  await new Promise((resolve) => setTimeout(resolve, 200));
  while (performance.now() < end) {
    const { ms, status } = await post(agent, url, priorities ? 'u=0' : undefined);
    if (status === 200) high.push(ms);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  await Promise.all(low);
  agent.destroy();
  high.sort((a, b) => a - b);
  return {
    p50: percentile(high, 50),
    p99: percentile(high, 99),
    highCalls: high.length,
    lowRps: lowDone / seconds,
  };
}

/**
 * High-priority latency under a saturating low-priority load: an API with `concurrency: 2` whose calls take
 * 2 ms (off the event loop), 64 low-priority connections back to back, one high-priority caller; with
 * priorities (`u=7` and `u=0`) and without (no header: one FIFO). Alternated rounds, the server pinned to one
 * CPU and the load generator to another. The ratios with / without are the figures (lower is better).
 */
export async function benchQueuePriority({ seconds = 5, rounds = 3, lowClients = 64 } = {}) {
  const pinning = cpuPinning();
  const server = await startServer(['--import', 'tsx', SERVER], pinning.serverPrefix);
  const unpin = pinning.pinLoadGenerator();
  try {
    const url = new URL('/job', server.url);
    await round(url, 1, lowClients, true);
    const withP: Round[] = [];
    const without: Round[] = [];
    for (let i = 0; i < rounds; i++) {
      withP.push(await round(url, seconds, lowClients, true));
      without.push(await round(url, seconds, lowClients, false));
    }
    const of = (runs: Round[], key: keyof Round): Spread => spread(runs.map((r) => r[key]));
    const ratio = (key: 'p50' | 'p99'): Spread => spread(withP.map((r, i) => r[key] / without[i]![key]));
    return {
      with: {
        p50: of(withP, 'p50'),
        p99: of(withP, 'p99'),
        lowRps: of(withP, 'lowRps'),
        calls: of(withP, 'highCalls'),
      },
      without: {
        p50: of(without, 'p50'),
        p99: of(without, 'p99'),
        lowRps: of(without, 'lowRps'),
        calls: of(without, 'highCalls'),
      },
      p50Ratio: ratio('p50'),
      p99Ratio: ratio('p99'),
      pinning: pinning.description,
    };
  } finally {
    unpin();
    await stopServer(server.child);
  }
}
