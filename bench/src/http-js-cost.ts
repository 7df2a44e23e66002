import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cpuPinning } from './cpu-pinning.js';
import { type Spread, spread } from './stats.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const KINDS = ['node', 'fastify', 'fastify-log', 'tiffin', 'tiffin-log'] as const;
export type ServerKind = (typeof KINDS)[number];

/**
 * JavaScript CPU per request of each JSON echo server over in-memory sockets (servers/in-memory-http.ts): the
 * framework's own cost without the kernel's TCP work that every server pays alike, and without a load
 * generator on the same machine. Each measurement is a fresh pinned process; kinds alternate round by round.
 */
export function benchHttpJsCost({ rounds = 3, requests = 20_000 } = {}): {
  cpuUs: Record<ServerKind, Spread>;
  pinning: string;
} {
  const pinning = cpuPinning();
  const runs = Object.fromEntries(KINDS.map((k) => [k, [] as number[]])) as Record<ServerKind, number[]>;
  for (let round = 0; round < rounds; round++) {
    for (const kind of KINDS) {
      const [command, ...prefix] = [...pinning.serverPrefix, process.execPath];
      const run = spawnSync(
        command!,
        [...prefix, '--import', 'tsx', join(HERE, 'servers', 'in-memory-http.ts'), kind, String(requests)],
        // stdout carries tiffin-log's access log: read and dropped.
        { encoding: 'utf8', maxBuffer: 1 << 30 },
      );
      const line = run.stderr.trim().split('\n').pop() ?? '';
      if (run.status !== 0 || !line.startsWith('{')) throw new Error(`${kind}: ${run.stderr.slice(-500)}`);
      runs[kind].push((JSON.parse(line) as { cpuUs: number }).cpuUs);
    }
  }
  const cpuUs = Object.fromEntries(KINDS.map((k) => [k, spread(runs[k])])) as Record<ServerKind, Spread>;
  return { cpuUs, pinning: pinning.description };
}
