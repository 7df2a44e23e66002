import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cpuPinning } from './cpu-pinning.js';
import { load, type Run } from './http-echo.js';
import { startServer, stopServer } from './servers/spawn.js';
import { type Spread, spread } from './stats.js';

const SERVER = join(dirname(fileURLToPath(import.meta.url)), 'servers', 'tiffin-cache-echo.ts');

/** The servers compared: the echo API plain and cached, with no work and with 1 ms of CPU work a call. */
const VARIANTS: Record<string, Record<string, string>> = {
  plain: {},
  hit: { BENCH_CACHE: '1' },
  work: { BENCH_WORK_MS: '1' },
  workHit: { BENCH_WORK_MS: '1', BENCH_CACHE: '1' },
};

/**
 * What a response-cache hit costs against a plain call: req/s and server CPU per request of the JSON echo API
 * without the cache and with it (every call a hit: one payload), and the same with 1 ms of work in the function.
 * Alternated rounds, servers pinned to one CPU and the load generator to another.
 */
export async function benchResponseCache({ seconds = 5, connections = 50, rounds = 3 } = {}) {
  const pinning = cpuPinning();
  const names = Object.keys(VARIANTS);
  const started = new Map<string, Awaited<ReturnType<typeof startServer>>>();
  try {
    for (const name of names) {
      const saved = { ...process.env };
      Object.assign(process.env, VARIANTS[name]);
      try {
        started.set(name, await startServer(['--import', 'tsx', SERVER], pinning.serverPrefix));
      } finally {
        process.env = saved;
      }
    }
    const unpin = pinning.pinLoadGenerator();
    try {
      const runs = Object.fromEntries(names.map((n) => [n, [] as Run[]]));
      for (const name of names) {
        const { url, child } = started.get(name)!;
        await load(url, 1, connections, child.pid!);
      }
      for (let i = 0; i < rounds; i++)
        for (const name of names) {
          const { url, child } = started.get(name)!;
          runs[name]!.push(await load(url, seconds, connections, child.pid!));
        }
      const ratio = (a: string, b: string): Spread =>
        spread(runs[a]!.map((r, i) => r.rps / runs[b]![i]!.rps));
      return {
        rps: Object.fromEntries(names.map((n) => [n, spread(runs[n]!.map((r) => r.rps))])),
        cpuUs: Object.fromEntries(names.map((n) => [n, spread(runs[n]!.map((r) => r.cpuUs))])),
        hitVsPlain: ratio('hit', 'plain'),
        workHitVsWork: ratio('workHit', 'work'),
        pinning: pinning.description,
      };
    } finally {
      unpin();
    }
  } finally {
    for (const { child } of started.values()) await stopServer(child);
  }
}
