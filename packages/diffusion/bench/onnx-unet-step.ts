/**
 * One SD1.5 UNet step (64×64 latents, batch 2 = one classifier-free-guidance step) on onnxruntime
 * (graph built by Tiffin) against torch with the same weights and inputs (Debian's python3-torch,
 * plain functional ops: bench/torch_unet_step.py), runs alternated, with min/median/max, the ratio,
 * the output difference and the load average. Skips torch with a message where it is absent.
 * An SDXL UNet (`text_time`) gets pooled text embeds and 1024² time ids too (`--latent=128 --batch=1` for 1024²).
 *
 * `--one-at-a-time`: for a model whose two copies do not fit in memory (SDXL in f32: 10.3 GB each), each run opens
 * the onnxruntime session (from its saved optimized form), warms it up, times a step and releases it, then starts
 * torch, warms it up, times a step and stops it; peak RSS of each side is reported.
 *
 * `--weights=f32,int8` builds one graph per weight format (engines/onnx/weight-format.ts) and alternates their runs
 * too: min/median/max of each, the ratio to the first, the output difference and each graph's weight bytes.
 *
 * Usage (from packages/diffusion), with a folder from scripts/make-sd15-random.ts:
 *   nice -n 10 tsx --conditions=source bench/onnx-unet-step.ts <sd15 folder> [--threads=2] [--runs=3] [--no-lora-branches]
 *     [--weights=f32,int8] [--arena=on,off] [--no-torch]
 *     [--batch=2] [--latent=64] [--one-at-a-time] [--graphs=<dir, kept between runs>]
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { loadOrt } from '@tiffin/onnx';
import { timeIdsEmbedding, timestepEmbedding } from '../src/architectures/timestep-embedding.js';
import { unetWeightSpecs } from '../src/architectures/unet.js';
import type { UNetConfig } from '../src/architectures/unet-config.js';
import { ensureGraph } from '../src/engines/onnx/graph-cache.js';
import { openOptimizedSession } from '../src/engines/onnx/optimized-cache.js';
import { sessionOptions } from '../src/engines/onnx/session.js';
import { buildUNetGraph, UNET_INPUTS, UNET_OUTPUT } from '../src/engines/onnx/unet-graph.js';
import { parseOnnxWeights } from '../src/engines/onnx/weight-format.js';
import { SafetensorsWeightSource } from '../src/engines/onnx/weight-source.js';
import { detInput } from '../src/weights/deterministic.js';

const args = process.argv.slice(2);
const folder = args.find((a) => !a.startsWith('--'));
const opt = (name: string, def: number) =>
  Number(args.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? def);
const threads = opt('threads', 2);
const runs = opt('runs', 3);
const loraBranches = !args.includes('--no-lora-branches');
const formats = (args.find((a) => a.startsWith('--weights='))?.split('=')[1] ?? 'f32')
  .split(',')
  .map((w) => parseOnnxWeights(w, '--weights'));
const withTorch = !args.includes('--no-torch');
// `--arena=on,off`: one session per setting of ORT's CPU memory arena (per weight format), runs alternated.
const arenas = (args.find((a) => a.startsWith('--arena='))?.split('=')[1] ?? 'on').split(',');
const oneAtATime = args.includes('--one-at-a-time');
const graphsDir = args.find((a) => a.startsWith('--graphs='))?.split('=')[1];
if (oneAtATime && (formats.length > 1 || arenas.length > 1)) {
  console.error('--one-at-a-time compares one onnxruntime session with torch: one --weights, one --arena');
  process.exit(2);
}
if (!folder || !existsSync(join(folder, 'unet', 'config.json'))) {
  console.error('usage: onnx-unet-step <sd15 folder (scripts/make-sd15-random.ts)> [--threads=2] [--runs=3]');
  process.exit(2);
}
const stats = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return { min: s[0], median: s[Math.floor(s.length / 2)], max: s[s.length - 1] };
};
const fmt = (x: { min: number; median: number; max: number }) =>
  `min ${x.min.toFixed(2)} s, median ${x.median.toFixed(2)} s, max ${x.max.toFixed(2)} s`;
const gb = (bytes: number) => (bytes / 1024 ** 3).toFixed(2);
const load = () =>
  loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');

const config = JSON.parse(readFileSync(join(folder, 'unet', 'config.json'), 'utf8')) as UNetConfig;
const B = opt('batch', 2);
const HW = opt('latent', 64);
const L = 77;
const Dc = config.cross_attention_dim;
const t = 500;
const sampleNchw = detInput('bench/sample', [B, 4, HW, HW]);
const context = detInput('bench/context', [B, L, Dc]);
// SDXL: pooled text embeds and the six micro-conditioning ids of a square image of the latent's size.
const textTime = config.addition_embed_type === 'text_time';
const timeDim = config.addition_time_embed_dim ?? 0;
const pooledDim = (config.projection_class_embeddings_input_dim ?? 0) - 6 * timeDim;
const textEmbeds = textTime ? detInput('bench/text-embeds', [B, pooledDim]) : new Float32Array(0);
const px = HW * 8;
const timeIds = textTime ? Array.from({ length: B }, () => [px, px, 0, 0, px, px]) : [];
const work = mkdtempSync(join(tmpdir(), 'tiffin-bench-'));
const graphRoot = graphsDir ?? join(work, 'graphs');
console.log(
  `UNet step: batch ${B}, ${HW}×${HW} latents (${px}² images)${textTime ? ', text_time conditioning' : ''}, ${threads} threads`,
);

// --- onnxruntime ---
const ort = await loadOrt();
const source = new SafetensorsWeightSource('unet', [
  join(folder, 'unet', 'diffusion_pytorch_model.safetensors'),
]);
const specs = new Set(
  unetWeightSpecs(config)
    .filter((s) => s.kind !== 'plain')
    .map((s) => s.name),
);
let t0 = performance.now();
const sessions: { weights: string; session: Awaited<ReturnType<typeof ort.InferenceSession.create>> }[] = [];
let graph: ReturnType<typeof ensureGraph> | undefined;
for (const weights of formats) {
  t0 = performance.now();
  graph = ensureGraph(graphRoot, {
    name: 'unet',
    key: { config, loraBranches },
    source,
    loraTarget: loraBranches ? (n) => specs.has(n) : () => false,
    weights,
    build: (g) => buildUNetGraph(g, config, { kind: 'fused' }),
  });
  console.log(
    `${weights} graph built in ${((performance.now() - t0) / 1000).toFixed(1)} s, weights ${(statSync(graph.dataPath).size / 1e9).toFixed(2)} GB (LoRA branch inputs: ${loraBranches ? graph.loraBranches.size : 'none'})`,
  );
  for (const arena of arenas) {
    if (oneAtATime) break; // opened per run below
    t0 = performance.now();
    const session = await ort.InferenceSession.create(graph.modelPath, {
      ...sessionOptions({ providers: ['cpu'], threads, skipped: [] }),
      enableCpuMemArena: arena !== 'off',
    });
    const label = arenas.length > 1 ? `${weights} arena ${arena}` : weights;
    console.log(
      `${label} session created in ${((performance.now() - t0) / 1000).toFixed(1)} s (peak RSS so far ${(process.resourceUsage().maxRSS / 1024 / 1024).toFixed(2)} GB)`,
    );
    sessions.push({ weights: label, session });
  }
}
source.close();
if (!graph) throw new Error('no weight format');
const nhwc = new Float32Array(sampleNchw.length);
for (let b = 0; b < B; b++)
  for (let c = 0; c < 4; c++)
    for (let y = 0; y < HW; y++)
      for (let x = 0; x < HW; x++)
        nhwc[((b * HW + y) * HW + x) * 4 + c] = sampleNchw[((b * 4 + c) * HW + y) * HW + x];
const feeds: Record<string, InstanceType<typeof ort.Tensor>> = {
  [UNET_INPUTS.sample]: new ort.Tensor('float32', nhwc, [B, HW, HW, 4]),
  [UNET_INPUTS.timeProj]: new ort.Tensor(
    'float32',
    timestepEmbedding(t, config.block_out_channels[0], true, 0),
    [1, config.block_out_channels[0]],
  ),
  [UNET_INPUTS.context]: new ort.Tensor('float32', context, [B, L, Dc]),
  ...(textTime
    ? {
        [UNET_INPUTS.textEmbeds]: new ort.Tensor('float32', textEmbeds, [B, pooledDim]),
        [UNET_INPUTS.timeIds]: new ort.Tensor('float32', timeIdsEmbedding(timeIds, timeDim, true, 0), [
          B,
          6 * timeDim,
        ]),
      }
    : {}),
};
for (const b of graph.loraBranches.values()) {
  const k = b.kernel;
  if (b.kind === 'linear') {
    feeds[b.down] = new ort.Tensor('float32', new Float32Array(b.inDim), [b.inDim, 1]);
    feeds[b.up] = new ort.Tensor('float32', new Float32Array(b.outDim), [1, b.outDim]);
  } else {
    feeds[b.down] = new ort.Tensor('float32', new Float32Array(b.inDim * k * k), [1, b.inDim, k, k]);
    feeds[b.up] = new ort.Tensor('float32', new Float32Array(b.outDim), [b.outDim, 1, 1, 1]);
  }
}
const outputs: Float32Array[] = [];
const ortStep = async (k = 0) => {
  const s = performance.now();
  const out = await sessions[k].session.run(feeds);
  const secs = (performance.now() - s) / 1000;
  outputs[k] = out[UNET_OUTPUT].data as Float32Array;
  return secs;
};

// --- torch (persistent process, one step per request) ---
const python = '/usr/bin/python3';
const hasTorch =
  withTorch &&
  existsSync(python) &&
  spawnSync(python, ['-c', 'import torch, numpy'], { stdio: 'ignore' }).status === 0;
interface TorchProcess {
  step: () => Promise<number>;
  dump: (path: string) => Promise<void>;
  /** Peak RSS of the torch process in bytes. */
  rss: () => Promise<number>;
  stop: () => void;
}
const startTorch = async (): Promise<TorchProcess> => {
  const inputs = join(work, 'inputs.bin');
  const ids = timeIds.flat();
  const all = new Float32Array(sampleNchw.length + context.length + textEmbeds.length + ids.length + 1);
  all.set(sampleNchw);
  all.set(context, sampleNchw.length);
  all.set(textEmbeds, sampleNchw.length + context.length);
  all.set(ids, sampleNchw.length + context.length + textEmbeds.length);
  all[all.length - 1] = t;
  writeFileSync(inputs, Buffer.from(all.buffer));
  const script = fileURLToPath(new URL('./torch_unet_step.py', import.meta.url));
  const child = spawn(
    python,
    [script, join(folder, 'unet'), String(threads), inputs, String(B), String(HW)],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const next = async () => String((await lines.next()).value);
  const start = performance.now();
  await next(); // ready
  console.log(
    `torch ${threads} threads: weights loaded in ${((performance.now() - start) / 1000).toFixed(1)} s`,
  );
  const ask = async (line: string) => {
    child.stdin.write(`${line}\n`);
    return await next();
  };
  return {
    step: async () => Number(await ask('run')),
    dump: async (path) => void (await ask(`dump ${path}`)),
    rss: async () => Number(await ask('rss')),
    stop: () => child.kill(),
  };
};
let torchStep: (() => Promise<number>) | null = null;
let torchDump: ((path: string) => Promise<void>) | null = null;
let stopTorch = () => {};
if (!hasTorch) console.log('torch: skipped (no python3-torch: apt-get install -y python3-torch)');
else if (!oneAtATime) {
  const torch = await startTorch();
  torchStep = torch.step;
  torchDump = torch.dump;
  stopTorch = torch.stop;
}

console.log(`load average before: ${load()}`);
if (oneAtATime) {
  // One side resident at a time: open, warm up, time one step, release; then the same for torch.
  const runtime = { providers: ['cpu'], threads, skipped: [] };
  const label = formats[0];
  const ortTimes: number[] = [];
  const torchTimes: number[] = [];
  let torchRss = 0;
  const torchOut = join(work, 'torch-out.bin');
  for (let i = 0; i < runs; i++) {
    t0 = performance.now();
    const opened = await openOptimizedSession(ort, graph, runtime, true, console.log);
    console.log(
      `run ${i + 1}: onnxruntime ${label} session opened (${opened.from}) in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
    );
    sessions[0] = { weights: label, session: opened.session };
    await ortStep(0); // warm-up (first run allocates)
    ortTimes.push(await ortStep(0));
    console.log(`run ${i + 1}: onnxruntime resident after the step ${gb(process.memoryUsage().rss)} GB`);
    await opened.session.release();
    let torchLine = '';
    if (hasTorch) {
      const torch = await startTorch();
      await torch.step(); // warm-up
      torchTimes.push(await torch.step());
      if (i === runs - 1) await torch.dump(torchOut);
      const rss = await torch.rss();
      console.log(`run ${i + 1}: torch peak RSS ${gb(rss)} GB`);
      torchRss = Math.max(torchRss, rss);
      torch.stop();
      torchLine = `, torch ${torchTimes[i].toFixed(2)} s`;
    }
    console.log(
      `run ${i + 1}: onnxruntime ${label} ${ortTimes[i].toFixed(2)} s${torchLine} (load ${load()})`,
    );
  }
  const o = stats(ortTimes);
  console.log(`onnxruntime ${label}, ${threads} threads: ${fmt(o)}`);
  if (hasTorch) {
    const tt = stats(torchTimes);
    console.log(`torch, ${threads} threads: ${fmt(tt)}`);
    console.log(
      `ratio onnxruntime / torch (medians): ${(o.median / tt.median).toFixed(2)}×; per run ${ortTimes.map((x, k) => (x / torchTimes[k]).toFixed(2)).join(', ')}`,
    );
    compareWithTorch(outputs[0], torchOut);
    console.log(`peak RSS (torch process): ${gb(torchRss)} GB`);
  }
  console.log(`load average after: ${load()}`);
  console.log(
    `peak RSS (this process: graph build and onnxruntime): ${(process.resourceUsage().maxRSS / 1024 / 1024).toFixed(2)} GB`,
  );
  if (!graphsDir) rmSync(work, { recursive: true, force: true });
  process.exit(0);
}
for (let k = 0; k < sessions.length; k++) await ortStep(k); // warm-up (first run allocates)
if (torchStep) await torchStep();
const formatTimes: number[][] = sessions.map(() => []);
const torchTimes: number[] = [];
for (let i = 0; i < runs; i++) {
  for (let k = 0; k < sessions.length; k++) formatTimes[k].push(await ortStep(k));
  if (torchStep) torchTimes.push(await torchStep());
  console.log(
    `run ${i + 1}: ${sessions.map((x, k) => `onnxruntime ${x.weights} ${formatTimes[k][i].toFixed(2)} s`).join(', ')}${torchStep ? `, torch ${torchTimes[i].toFixed(2)} s` : ''} (load ${load()})`,
  );
}
const ortTimes = formatTimes[0];
const ortOut = outputs[0];
const o = stats(ortTimes);
for (let k = 0; k < sessions.length; k++) {
  const st = stats(formatTimes[k]);
  console.log(`onnxruntime ${sessions[k].weights}, ${threads} threads: ${fmt(st)}`);
  if (k === 0) continue;
  let diff = 0;
  let ref = 0;
  for (let i = 0; i < ortOut.length; i++) {
    diff = Math.max(diff, Math.abs(outputs[k][i] - ortOut[i]));
    ref = Math.max(ref, Math.abs(ortOut[i]));
  }
  console.log(
    `  ${sessions[0].weights} / ${sessions[k].weights} (medians): ${(o.median / st.median).toFixed(2)}×; output max abs diff ${diff.toExponential(2)} (max |${sessions[0].weights}| ${ref.toFixed(2)})`,
  );
}
if (torchStep && torchDump) {
  const tt = stats(torchTimes);
  console.log(`torch, ${threads} threads: ${fmt(tt)}`);
  console.log(`ratio onnxruntime / torch (medians): ${(o.median / tt.median).toFixed(2)}×`);
  const dump = join(work, 'torch-out.bin');
  await torchDump(dump);
  compareWithTorch(ortOut, dump);
}
console.log(`load average after: ${load()}`);
// ru_maxrss of this process: the onnxruntime session, its arena and the graph build (torch runs in its own process).
console.log(`peak RSS (this process): ${(process.resourceUsage().maxRSS / 1024 / 1024).toFixed(2)} GB`);
stopTorch();
for (const x of sessions) await x.session.release();
rmSync(work, { recursive: true, force: true });

/** Max abs difference of the onnxruntime output (NHWC) and torch's dump (NCHW). */
function compareWithTorch(ortOut: Float32Array, dump: string): void {
  const ref = new Float32Array(readFileSync(dump).buffer.slice(0));
  let maxDiff = 0;
  let maxRef = 0;
  for (let b = 0; b < B; b++)
    for (let c = 0; c < 4; c++)
      for (let y = 0; y < HW; y++)
        for (let x = 0; x < HW; x++) {
          const r = ref[((b * 4 + c) * HW + y) * HW + x];
          maxRef = Math.max(maxRef, Math.abs(r));
          maxDiff = Math.max(maxDiff, Math.abs(r - ortOut[((b * HW + y) * HW + x) * 4 + c]));
        }
  console.log(
    `output max abs diff onnxruntime vs torch: ${maxDiff.toExponential(2)} (max |torch| ${maxRef.toFixed(2)})`,
  );
}
