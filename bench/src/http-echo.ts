import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { cpuPinning } from './cpu-pinning.js';

const HERE = dirname(fileURLToPath(import.meta.url));

const PAYLOAD = JSON.stringify({
  id: 42,
  name: 'iris sample',
  features: [5.1, 3.5, 1.4, 0.2],
  tags: ['a', 'b', 'c'],
  meta: { source: 'bench', ok: true },
});

async function startServer(
  script: string,
  prefix: readonly string[],
): Promise<{ url: string; child: ChildProcess }> {
  // Through `taskset` when pinned (it execs node, so the pid is the server's).
  const [command, ...prefixArgs] = prefix.length > 0 ? prefix : [process.execPath];
  const child = spawn(
    command!,
    [
      ...(prefix.length > 0 ? [...prefixArgs, process.execPath] : []),
      // @tiffin/core from its build (what users run); BENCH_FROM_SOURCE=1 measures src through tsx instead.
      ...(process.env.BENCH_FROM_SOURCE ? ['--conditions=source'] : []),
      '--import',
      'tsx',
      join(HERE, 'servers', script),
    ],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const line = out.split('\n')[0];
      if (out.includes('\n') && line) resolve(line.trim());
    });
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code}`)));
  });
  return { url, child };
}

/** CPU seconds (user + system) a process has used so far, from /proc (Linux); NaN elsewhere. */
function cpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // Fields 14 and 15 of stat (utime, stime) are at 11 and 12 after the command name; clock ticks of 10 ms.
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return Number.NaN;
  }
}

interface LoadResult {
  rps: number;
  requests: number;
  cpu: number;
}

async function load(url: string, seconds: number, connections: number, pid: number): Promise<LoadResult> {
  const cpuBefore = cpuSeconds(pid);
  const result = await autocannon({
    url: `${url}/echo`,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: PAYLOAD,
    connections,
    duration: seconds,
  });
  if (result.non2xx > 0 || result.errors > 0) {
    throw new Error(`load run failed: ${result.non2xx} non-2xx, ${result.errors} errors`);
  }
  return { rps: result.requests.average, requests: result.requests.total, cpu: cpuSeconds(pid) - cpuBefore };
}

export interface EchoResult {
  /** Requests per second. */
  tiffin: number;
  koa: number;
  /** Server CPU microseconds per request (robust to other load on the machine). */
  tiffinCpuUs: number;
  koaCpuUs: number;
  /** How the processes were placed on CPUs. */
  pinning: string;
}

/**
 * Requests/s of a JSON echo API served by Tiffin against a bare Koa route doing the same work. Both servers run
 * as child processes; the runs alternate (A B A B) after a warm-up so drift on a shared machine hits both.
 */
export async function benchHttpEcho({ seconds = 5, connections = 50, rounds = 3 } = {}): Promise<EchoResult> {
  const pinning = cpuPinning();
  const tiffin = await startServer(process.env.BENCH_TIFFIN_SERVER ?? 'tiffin-echo.ts', pinning.serverPrefix);
  const koa = await startServer('koa-echo.ts', pinning.serverPrefix);
  const unpin = pinning.pinLoadGenerator();
  try {
    const check = await fetch(`${tiffin.url}/echo`, {
      method: 'POST',
      body: PAYLOAD,
      headers: { 'content-type': 'application/json' },
    });
    if ((await check.text()) !== PAYLOAD) throw new Error('Tiffin echo does not return the payload');
    await load(tiffin.url, 2, connections, tiffin.child.pid!);
    await load(koa.url, 2, connections, koa.child.pid!);
    const sums = { tiffin: 0, koa: 0, tiffinCpu: 0, tiffinReq: 0, koaCpu: 0, koaReq: 0 };
    for (let i = 0; i < rounds; i++) {
      const t = await load(tiffin.url, seconds, connections, tiffin.child.pid!);
      const k = await load(koa.url, seconds, connections, koa.child.pid!);
      sums.tiffin += t.rps;
      sums.tiffinCpu += t.cpu;
      sums.tiffinReq += t.requests;
      sums.koa += k.rps;
      sums.koaCpu += k.cpu;
      sums.koaReq += k.requests;
    }
    return {
      tiffin: sums.tiffin / rounds,
      koa: sums.koa / rounds,
      tiffinCpuUs: (sums.tiffinCpu / sums.tiffinReq) * 1e6,
      koaCpuUs: (sums.koaCpu / sums.koaReq) * 1e6,
      pinning: pinning.description,
    };
  } finally {
    unpin();
    tiffin.child.kill('SIGTERM');
    koa.child.kill('SIGTERM');
  }
}
