/**
 * A model repository's switching cost (docs/model-repository.md, residency): `tiffin serve DIR
 * --max-loaded-models 1` on two ONNX models, the server pinned to one CPU and this process (the client) to
 * another. Per round, a fresh server: calls to the resident model (the baseline), the first call to the model
 * that is not resident (loaded on demand, evicting the other), then calls alternating between the two (each one
 * an LRU switch: an eviction and a load). Printed as ratios to the resident call, min / median / max over rounds,
 * with the load seconds the server counts. Then memory: 10 small models served by one repository process
 * against 10 `tiffin serve model.onnx` processes (resident set sizes summed). Run alone:
 * `node --import tsx src/model-switch.ts` (`BENCH_ROUNDS`, `BENCH_SWITCH_WIDTH`).
 */
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cpuPinning } from './cpu-pinning.js';
import { mlpModel } from './servers/onnx-mlp.js';
import { startServer, stopServer } from './servers/spawn.js';
import { fmt, loadAverage, type Spread, spread } from './stats.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const CLI = join(HERE, '..', '..', 'packages', 'cli', 'src', 'bin.ts');
/** `tiffin` from this checkout's sources, as `npx tiffin` runs it. */
const TIFFIN = ['--conditions=source', '--import', 'tsx', CLI];

export interface ModelSwitchResult {
  pinning: string;
  modelBytes: number;
  residentMs: Spread;
  firstMs: Spread;
  switchMs: Spread;
  firstRatio: Spread;
  switchRatio: Spread;
  loadSeconds: Spread;
  memory: { oneProcessMiB: number; tenProcessesMiB: number; ratio: number };
}

async function timedCall(url: string, name: string, row: number[]): Promise<number> {
  const start = performance.now();
  const res = await fetch(`${url}/${name}/predict`, { method: 'POST', body: JSON.stringify([row]) });
  await res.arrayBuffer();
  if (res.status !== 200) throw new Error(`${name}: ${res.status}`);
  return performance.now() - start;
}

const median = (values: number[]) => spread(values).median;

/** Resident set size of a process, MiB (Linux /proc; NaN elsewhere). */
function rssMiB(pid: number | undefined): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1]) / 1024;
  } catch {
    return Number.NaN;
  }
}

async function metric(url: string, name: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  let sum = 0;
  for (const m of text.matchAll(new RegExp(`^tiffin_api_server_${name}\\{[^}]*\\} ([0-9.e+-]+)$`, 'gm')))
    sum += Number(m[1]);
  return sum;
}

export async function benchModelSwitch(options: { rounds: number }): Promise<ModelSwitchResult> {
  const pinning = cpuPinning();
  const width = Number(process.env.BENCH_SWITCH_WIDTH ?? 2048);
  const dir = await mkdtemp(join(tmpdir(), 'tiffin-bench-switch-'));
  const serve = (args: string[]) =>
    startServer(
      [...TIFFIN, 'serve', ...args, '--port', '0', '--instances', '1', '--threads', '1'],
      pinning.serverPrefix,
    );
  try {
    // Two copies of one model (two models to the server): 64 floats in, three `width`-wide layers, 16 out.
    const repo = join(dir, 'repo');
    await mkdir(repo);
    const bytes = mlpModel(64, width, 3, 16);
    await writeFile(join(repo, 'a.onnx'), bytes);
    await writeFile(join(repo, 'b.onnx'), bytes);
    const row = Array.from({ length: 64 }, (_, i) => i / 64);
    const restore = pinning.pinLoadGenerator();
    const resident: number[] = [];
    const first: number[] = [];
    const switches: number[] = [];
    const loadSeconds: number[] = [];
    try {
      for (let round = 0; round < options.rounds; round++) {
        const { url, child } = await serve([repo, '--max-loaded-models', '1']);
        try {
          // At start every model loads within the budget: the last one loaded (b) is resident, a was evicted.
          for (let i = 0; i < 3; i++) await timedCall(url, 'b', row); // warm-up
          const calls: number[] = [];
          for (let i = 0; i < 20; i++) calls.push(await timedCall(url, 'b', row));
          const base = median(calls);
          resident.push(base);
          const loadsBefore = await metric(url, 'model_loads_total');
          const secondsBefore = await metric(url, 'model_load_seconds_total');
          first.push(await timedCall(url, 'a', row));
          const alternating: number[] = [];
          for (let i = 0; i < 6; i++) alternating.push(await timedCall(url, i % 2 === 0 ? 'b' : 'a', row));
          switches.push(median(alternating));
          const loads = (await metric(url, 'model_loads_total')) - loadsBefore;
          loadSeconds.push(((await metric(url, 'model_load_seconds_total')) - secondsBefore) / loads);
        } finally {
          await stopServer(child);
        }
      }
    } finally {
      restore();
    }
    const firstRatio = first.map((f, i) => f / resident[i]!);
    const switchRatio = switches.map((s, i) => s / resident[i]!);

    // Memory: 10 small models (64 → 256 → 16) in one process against one process each.
    const small = join(dir, 'small');
    await mkdir(small);
    for (let i = 0; i < 10; i++) await writeFile(join(small, `m${i}.onnx`), mlpModel(64, 256, 2, 16));
    const one = await serve([small]);
    for (let i = 0; i < 10; i++) await timedCall(one.url, `m${i}`, row);
    const oneProcessMiB = rssMiB(one.child.pid);
    await stopServer(one.child);
    let tenProcessesMiB = 0;
    const started = [];
    for (let i = 0; i < 10; i++) started.push(await serve([join(small, `m${i}.onnx`)]));
    for (const s of started) {
      const res = await fetch(`${s.url}/predict`, { method: 'POST', body: JSON.stringify([row]) });
      await res.arrayBuffer();
      tenProcessesMiB += rssMiB(s.child.pid);
    }
    await Promise.all(started.map((s) => stopServer(s.child)));
    return {
      pinning: pinning.description,
      modelBytes: bytes.length,
      residentMs: spread(resident),
      firstMs: spread(first),
      switchMs: spread(switches),
      firstRatio: spread(firstRatio),
      switchRatio: spread(switchRatio),
      loadSeconds: spread(loadSeconds),
      memory: { oneProcessMiB, tenProcessesMiB, ratio: tenProcessesMiB / oneProcessMiB },
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const line = (s: Spread, digits: number) =>
  `${fmt(s.min, digits)} / ${fmt(s.median, digits)} / ${fmt(s.max, digits)}`;

export function printModelSwitch(r: ModelSwitchResult, rounds: number): void {
  console.log(
    `Model repository, --max-loaded-models 1 on two ONNX models of ${fmt(r.modelBytes / 2 ** 20, 1)} MiB (${r.pinning}; min / median / max of ${rounds} rounds, a fresh server each):`,
  );
  console.log(`  resident call              ${line(r.residentMs, 2)} ms`);
  console.log(
    `  first call, not resident   ${line(r.firstMs, 1)} ms   ${line(r.firstRatio, 1)}x the resident call`,
  );
  console.log(
    `  LRU switch (a, b, a, ...)  ${line(r.switchMs, 1)} ms   ${line(r.switchRatio, 1)}x the resident call`,
  );
  console.log(`  load seconds per load (the server's metric) ${line(r.loadSeconds, 3)} s`);
  console.log(
    `  memory, 10 small models: one repository process ${fmt(r.memory.oneProcessMiB)} MiB, 10 processes ${fmt(r.memory.tenProcessesMiB)} MiB (${fmt(r.memory.ratio, 1)}x)`,
  );
  console.log(`  load average: ${loadAverage()}\n`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
  console.log(`load average at start: ${loadAverage()}`);
  printModelSwitch(await benchModelSwitch({ rounds }), rounds);
}
