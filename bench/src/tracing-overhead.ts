import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cpuPinning } from './cpu-pinning.js';
import { type Spread, spread } from './stats.js';

/** The variants: environment of the echo server's process (servers/echo-servers.ts, servers/bench-tracing.ts). */
const VARIANTS: ReadonlyArray<readonly [string, Record<string, string>]> = [
  ['off, no Server-Timing', { BENCH_SERVER_TIMING: '0' }],
  ['off', {}],
  ['on, not sampled', { BENCH_TRACING: 'unsampled' }],
  ['on, sampled', { BENCH_TRACING: 'sampled' }],
];

export interface TracingResult {
  /** Server CPU µs per JSON echo of each variant (and of `base`, the build BENCH_BASE_CORE names). */
  cpuUs: Record<string, Spread>;
  /** Per-round CPU ratios against tracing off (the variant's CPU per request / off's: above 1 costs more). */
  vsOff: Record<string, Spread>;
  pinning: string;
}

/**
 * What tracing costs the JSON echo: JavaScript CPU per request over in-memory sockets (servers/in-memory-http.ts,
 * steadier than req/s on a shared machine), tracing off (no SDK: today's path, with and without `Server-Timing`)
 * against the SDK registered with no span sampled and with every span sampled. With `BENCH_BASE_CORE` (another
 * build's dist/index.js) the same echo on that build too (before/after). A fresh pinned process per measurement;
 * the variants alternate round by round.
 */
export function benchTracingOverhead({ rounds = 3, requests = 20_000 } = {}): TracingResult {
  const pinning = cpuPinning();
  const base = process.env.BENCH_BASE_CORE;
  const variants = [...(base ? [['base', { BENCH_CORE: base }] as const] : []), ...VARIANTS];
  const runs: Record<string, number[]> = Object.fromEntries(variants.map(([name]) => [name, []]));
  const inMemory = join(dirname(fileURLToPath(import.meta.url)), 'servers', 'in-memory-http.ts');
  for (let round = 0; round < rounds; round++) {
    for (const [name, env] of variants) {
      const [command, ...prefix] = [...pinning.serverPrefix, process.execPath];
      const run = spawnSync(command!, [...prefix, '--import', 'tsx', inMemory, 'tiffin', String(requests)], {
        encoding: 'utf8',
        env: { ...process.env, ...env },
      });
      const line = run.stderr.trim().split('\n').pop() ?? '';
      if (run.status !== 0 || !line.startsWith('{')) throw new Error(`${name}: ${run.stderr.slice(-500)}`);
      runs[name]!.push((JSON.parse(line) as { cpuUs: number }).cpuUs);
    }
  }
  const off = runs.off!;
  return {
    cpuUs: Object.fromEntries(Object.entries(runs).map(([name, values]) => [name, spread(values)])),
    vsOff: Object.fromEntries(
      Object.entries(runs)
        .filter(([name]) => name !== 'off')
        .map(([name, values]) => [name, spread(values.map((v, i) => v / off[i]!))]),
    ),
    pinning: pinning.description,
  };
}
