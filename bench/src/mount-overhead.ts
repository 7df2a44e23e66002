import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cpuPinning } from './cpu-pinning.js';
import { ECHO_PAYLOAD } from './echo-payload.js';
import { load, type Run } from './http-echo.js';
import { startServer, stopServer } from './servers/spawn.js';
import { type Spread, spread } from './stats.js';

const SERVER = join(dirname(fileURLToPath(import.meta.url)), 'servers', 'tiffin-mount-echo.ts');

export interface MountResult {
  /** Requests/s and server CPU µs per request of each variant. */
  rps: Record<string, Spread>;
  cpuUs: Record<string, Spread>;
  /** Per-round req/s ratios: nothing mounted against the base build (when given), router against nothing. */
  noneVsBase: Spread | undefined;
  routerVsNone: Spread;
  /** The same as costs (baseline CPU per request / this one's). */
  cpuNoneVsBase: Spread | undefined;
  cpuRouterVsNone: Spread;
  pinning: string;
}

/**
 * What mounting costs API calls: the JSON echo API on quiet `serve()` with nothing mounted and with a
 * `@koa/router` (three routes and `allowedMethods()`) mounted in front, and, when `BENCH_BASE_CORE` names
 * another build's dist/index.js, the same service on that build (before/after). Alternated rounds, servers
 * pinned to one CPU and the load generator to another.
 */
export async function benchMountOverhead({
  seconds = 5,
  connections = 50,
  rounds = 3,
} = {}): Promise<MountResult> {
  const pinning = cpuPinning();
  const base = process.env.BENCH_BASE_CORE;
  const variants: Record<string, Record<string, string>> = {
    ...(base ? { base: { BENCH_CORE: base } } : {}),
    none: {},
    router: { BENCH_MOUNT: 'router' },
  };
  const names = Object.keys(variants);
  const started = new Map<string, Awaited<ReturnType<typeof startServer>>>();
  for (const name of names) {
    const env = variants[name]!;
    const saved = { ...process.env };
    Object.assign(process.env, env);
    try {
      started.set(name, await startServer(['--import', 'tsx', SERVER], pinning.serverPrefix));
    } finally {
      for (const key of Object.keys(env)) {
        if (saved[key] === undefined) delete process.env[key];
        else process.env[key] = saved[key];
      }
    }
  }
  const unpin = pinning.pinLoadGenerator();
  try {
    for (const name of names) {
      const { url, child } = started.get(name)!;
      const check = await fetch(`${url}/echo`, {
        method: 'POST',
        body: ECHO_PAYLOAD,
        headers: { 'content-type': 'application/json' },
      });
      if ((await check.text()) !== ECHO_PAYLOAD) throw new Error(`${name} echo does not return the payload`);
      await load(url, 2, connections, child.pid!);
    }
    const runs = Object.fromEntries(names.map((n) => [n, [] as Run[]]));
    for (let i = 0; i < rounds; i++) {
      for (const name of names) {
        const { url, child } = started.get(name)!;
        runs[name]!.push(await load(url, seconds, connections, child.pid!));
      }
    }
    const ratio = (a: string, b: string) => spread(runs[a]!.map((r, i) => r.rps / runs[b]![i]!.rps));
    const cost = (a: string, b: string) => spread(runs[a]!.map((r, i) => runs[b]![i]!.cpuUs / r.cpuUs));
    return {
      rps: Object.fromEntries(names.map((n) => [n, spread(runs[n]!.map((r) => r.rps))])),
      cpuUs: Object.fromEntries(names.map((n) => [n, spread(runs[n]!.map((r) => r.cpuUs))])),
      noneVsBase: base ? ratio('none', 'base') : undefined,
      routerVsNone: ratio('router', 'none'),
      cpuNoneVsBase: base ? cost('none', 'base') : undefined,
      cpuRouterVsNone: cost('router', 'none'),
      pinning: pinning.description,
    };
  } finally {
    unpin();
    for (const { child } of started.values()) await stopServer(child);
  }
}

/**
 * The same comparison as JavaScript CPU per request over in-memory sockets (servers/in-memory-http.ts): steadier
 * than req/s on a shared machine. A fresh pinned process per measurement; variants alternate round by round.
 */
export function benchMountJsCost({ rounds = 3, requests = 20_000 } = {}): {
  cpuUs: Record<string, Spread>;
  pinning: string;
} {
  const pinning = cpuPinning();
  const base = process.env.BENCH_BASE_CORE;
  const variants: Array<[string, string, Record<string, string>]> = [
    ...(base ? [['base', 'tiffin', { BENCH_CORE: base }] as [string, string, Record<string, string>]] : []),
    ['none', 'tiffin', {}],
    ['router', 'tiffin-router', {}],
  ];
  const runs: Record<string, number[]> = Object.fromEntries(variants.map(([name]) => [name, []]));
  const inMemory = join(dirname(fileURLToPath(import.meta.url)), 'servers', 'in-memory-http.ts');
  for (let round = 0; round < rounds; round++) {
    for (const [name, kind, env] of variants) {
      const [command, ...prefix] = [...pinning.serverPrefix, process.execPath];
      const run = spawnSync(command!, [...prefix, '--import', 'tsx', inMemory, kind, String(requests)], {
        encoding: 'utf8',
        env: { ...process.env, ...env },
      });
      const line = run.stderr.trim().split('\n').pop() ?? '';
      if (run.status !== 0 || !line.startsWith('{')) throw new Error(`${name}: ${run.stderr.slice(-500)}`);
      runs[name]!.push((JSON.parse(line) as { cpuUs: number }).cpuUs);
    }
  }
  return {
    cpuUs: Object.fromEntries(Object.entries(runs).map(([name, values]) => [name, spread(values)])),
    pinning: pinning.description,
  };
}
