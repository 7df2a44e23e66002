import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { cpuPinning } from './cpu-pinning.js';
import { ECHO_PAYLOAD } from './echo-payload.js';
import { startServer, stopServer } from './servers/spawn.js';
import { cpuSeconds, type Spread, spread } from './stats.js';

const HERE = dirname(fileURLToPath(import.meta.url));

/** One load run: requests/s and the server's CPU µs per request. */
export interface Run {
  rps: number;
  cpuUs: number;
}

/** autocannon on the JSON echo API of the server at `url` (process `pid`) for `seconds`. */
export async function load(url: string, seconds: number, connections: number, pid: number): Promise<Run> {
  const cpuBefore = cpuSeconds(pid);
  const result = await autocannon({
    url: `${url}/echo`,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: ECHO_PAYLOAD,
    connections,
    duration: seconds,
  });
  if (result.non2xx > 0 || result.errors > 0) {
    throw new Error(`load run failed: ${result.non2xx} non-2xx, ${result.errors} errors`);
  }
  return {
    rps: result.requests.average,
    cpuUs: ((cpuSeconds(pid) - cpuBefore) / result.requests.total) * 1e6,
  };
}

/** The servers compared, each a child process. */
const SERVERS = {
  /** `tiffin serve echo-service.ts`, default logging (pino JSON access log on stdout). */
  tiffinServe: (): string[] => {
    const require = createRequire(import.meta.url);
    const bin = join(dirname(require.resolve('@tiffin/cli/package.json')), 'dist', 'bin.js');
    return [
      bin,
      'serve',
      join(HERE, 'servers', 'echo-service.ts'),
      '--port',
      '0',
      '--max-concurrency',
      '100000',
    ];
  },
  /** Fastify with its defaults (no logging). */
  fastify: (): string[] => ['--import', 'tsx', join(HERE, 'servers', 'fastify-echo.ts')],
  /** Fastify with its logger on, one access line per request (the logging work `tiffin serve` does). */
  fastifyLogged: (): string[] => ['--import', 'tsx', join(HERE, 'servers', 'fastify-logged-echo.ts')],
  /** `serve()` with logging off. */
  tiffinQuiet: (): string[] => [
    ...(process.env.BENCH_FROM_SOURCE ? ['--conditions=source'] : []),
    '--import',
    'tsx',
    join(HERE, 'servers', process.env.BENCH_TIFFIN_SERVER ?? 'tiffin-echo.ts'),
  ],
  nodeHttp: (): string[] => ['--import', 'tsx', join(HERE, 'servers', 'node-echo.ts')],
} as const;

type ServerName = keyof typeof SERVERS;

export interface EchoResult {
  rps: Record<ServerName, Spread>;
  cpuUs: Record<ServerName, Spread>;
  /** Per-round ratios (same round, back to back). */
  serveVsFastify: Spread;
  /** Against Fastify writing one access line per request, as `tiffin serve` does. */
  serveVsFastifyLogged: Spread;
  quietVsNode: Spread;
  /**
   * The same three comparisons as costs: the baseline's server CPU per request over Tiffin's, per round. Steadier
   * than req/s when the load generator or other work shares the machine (above 1: Tiffin costs less).
   */
  cpuRatios: { serveVsFastify: Spread; serveVsFastifyLogged: Spread; quietVsNode: Spread };
  pinning: string;
}

/**
 * Requests/s of a JSON echo API: `tiffin serve` (default logging) against Fastify 5, and Tiffin with logging off
 * against a bare node:http handler. All four run as child processes pinned to one CPU, the load generator on
 * another; runs alternate (one of each per round) after a warm-up so drift on a shared machine hits all alike.
 */
export async function benchHttpEcho({ seconds = 5, connections = 50, rounds = 3 } = {}): Promise<EchoResult> {
  const pinning = cpuPinning();
  const names = Object.keys(SERVERS) as ServerName[];
  const started = new Map<ServerName, Awaited<ReturnType<typeof startServer>>>();
  for (const name of names) started.set(name, await startServer(SERVERS[name](), pinning.serverPrefix));
  const unpin = pinning.pinLoadGenerator();
  try {
    for (const name of names) {
      const { url } = started.get(name)!;
      const check = await fetch(`${url}/echo`, {
        method: 'POST',
        body: ECHO_PAYLOAD,
        headers: { 'content-type': 'application/json' },
      });
      if ((await check.text()) !== ECHO_PAYLOAD) throw new Error(`${name} echo does not return the payload`);
      await load(url, 2, connections, started.get(name)!.child.pid!);
    }
    const runs = Object.fromEntries(names.map((n) => [n, [] as Run[]])) as Record<ServerName, Run[]>;
    for (let i = 0; i < rounds; i++) {
      for (const name of names) {
        const { url, child } = started.get(name)!;
        runs[name].push(await load(url, seconds, connections, child.pid!));
      }
    }
    const ratio = (a: ServerName, b: ServerName) => spread(runs[a].map((r, i) => r.rps / runs[b][i]!.rps));
    const costRatio = (a: ServerName, b: ServerName) =>
      spread(runs[a].map((r, i) => runs[b][i]!.cpuUs / r.cpuUs));
    return {
      rps: Object.fromEntries(names.map((n) => [n, spread(runs[n].map((r) => r.rps))])) as Record<
        ServerName,
        Spread
      >,
      cpuUs: Object.fromEntries(names.map((n) => [n, spread(runs[n].map((r) => r.cpuUs))])) as Record<
        ServerName,
        Spread
      >,
      serveVsFastify: ratio('tiffinServe', 'fastify'),
      serveVsFastifyLogged: ratio('tiffinServe', 'fastifyLogged'),
      quietVsNode: ratio('tiffinQuiet', 'nodeHttp'),
      cpuRatios: {
        serveVsFastify: costRatio('tiffinServe', 'fastify'),
        serveVsFastifyLogged: costRatio('tiffinServe', 'fastifyLogged'),
        quietVsNode: costRatio('tiffinQuiet', 'nodeHttp'),
      },
      pinning: pinning.description,
    };
  } finally {
    unpin();
    for (const { child } of started.values()) await stopServer(child);
  }
}
