/**
 * Session start on onnxruntime with and without the saved optimized graphs (`optimized-cache.ts`): one first
 * start (graphs built, optimized and saved), then starts that open the plain cached graphs (optimizing again)
 * alternated with starts that open the saved optimized form; min/median/max of the time spent opening the
 * sessions and of the whole load, the ratio, and the load average.
 *
 * Usage (from packages/diffusion): nice -n 10 tsx --conditions=source bench/onnx-session-start.ts [model folder]
 *   [--threads=2] [--runs=3]   (no folder: the tiny test pipeline)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadOnnxComponents } from '../src/engines/onnx/load.js';
import { writeTinyPipeline } from '../src/tiny/write-tiny-pipeline.js';

const args = process.argv.slice(2);
const opt = (name: string, def: number) =>
  Number(args.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? def);
const threads = opt('threads', 2);
const runs = opt('runs', 3);
const work = mkdtempSync(join(tmpdir(), 'tiffin-session-bench-'));
const folder = args.find((a) => !a.startsWith('--')) ?? writeTinyPipeline(join(work, 'tiny'));
const cacheDir = join(work, 'graphs');

interface Start {
  total: number;
  sessions: number;
  lines: string[];
}

async function start(optimizedCache: boolean): Promise<Start> {
  const lines: string[] = [];
  const t0 = performance.now();
  const c = await loadOnnxComponents(folder, {
    cacheDir,
    intraOpThreads: threads,
    optimizedCache,
    log: (l) => lines.push(l),
  });
  const total = performance.now() - t0;
  c.textEncoder.dispose();
  c.unet.dispose();
  c.vae.dispose();
  const sessions = lines
    .map((l) => / session .* in (\d+) ms$/.exec(l))
    .reduce((sum, m) => sum + (m ? Number(m[1]) : 0), 0);
  return { total, sessions, lines };
}

const stats = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return `min ${s[0].toFixed(0)} ms, median ${s[Math.floor(s.length / 2)].toFixed(0)} ms, max ${s[s.length - 1].toFixed(0)} ms`;
};
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

try {
  console.log(
    `model ${folder}, ${threads} threads, ${runs} alternated runs; load average ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  );
  const first = await start(true);
  console.log(
    `first start (graphs built, optimized and saved): load ${first.total.toFixed(0)} ms, sessions ${first.sessions} ms`,
  );
  for (const l of first.lines) console.log(`  ${l}`);
  const plain: Start[] = [];
  const cached: Start[] = [];
  for (let i = 0; i < runs; i++) {
    plain.push(await start(false));
    cached.push(await start(true));
  }
  for (const l of cached[0].lines) console.log(`  ${l}`);
  console.log(
    `later starts, optimizing again (baseline): sessions ${stats(plain.map((s) => s.sessions))}; load ${stats(plain.map((s) => s.total))}`,
  );
  console.log(
    `later starts, saved optimized graphs:      sessions ${stats(cached.map((s) => s.sessions))}; load ${stats(cached.map((s) => s.total))}`,
  );
  console.log(
    `ratio (saved / baseline, medians): sessions ${(median(cached.map((s) => s.sessions)) / median(plain.map((s) => s.sessions))).toFixed(2)}, load ${(median(cached.map((s) => s.total)) / median(plain.map((s) => s.total))).toFixed(2)}; load average ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  );
} finally {
  rmSync(work, { recursive: true, force: true });
}
