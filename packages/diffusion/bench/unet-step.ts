/**
 * Seconds per UNet step (one call at batch 2 = one classifier-free-guidance step) on each tfjs
 * backend that loads: the tiny pipeline's UNet by default; with `--sd15`, an SD1.5-sized UNet at
 * 64×64 latents (512 px) with random weights, run stage by stage (conv_in, each down block, the
 * mid block, each up block, the head) so that only one stage's weights exist at a time. No
 * pass/fail: figures and ratios only.
 *
 * Usage (from packages/diffusion): pnpm bench [-- --backends=wasm,cpu --sd15 --sd15-backends=wasm,cpu]
 */
import * as tf from '@tensorflow/tfjs';
import { unetWeightSpecs } from '../src/architectures/unet.js';
import type { UNetConfig } from '../src/architectures/unet-config.js';
import { BACKEND_PREFERENCE, type BackendName, selectBackend } from '../src/backend.js';
import { UNet2DConditionModel } from '../src/engines/tfjs/unet.js';
import { type UNetActivations, type UNetStage, unetStages } from '../src/engines/tfjs/unet-stages.js';
import { tinyConfigs } from '../src/tiny/tiny-configs.js';
import { detInput, detWeight } from '../src/weights/deterministic.js';
import { WeightStore } from '../src/weights/store.js';
import type { WeightSpec } from '../src/weights/weight-spec.js';

const BATCH = 2;
const SD15_LATENT = 64;

/** SD1.5's UNet (runwayml/stable-diffusion-v1-5 unet/config.json, docs/spec/diffusion.md §5). */
const SD15_UNET: UNetConfig = {
  ...(tinyConfigs('sd1').unet as unknown as UNetConfig),
  sample_size: 64,
  block_out_channels: [320, 640, 1280, 1280],
  down_block_types: ['CrossAttnDownBlock2D', 'CrossAttnDownBlock2D', 'CrossAttnDownBlock2D', 'DownBlock2D'],
  up_block_types: ['UpBlock2D', 'CrossAttnUpBlock2D', 'CrossAttnUpBlock2D', 'CrossAttnUpBlock2D'],
  cross_attention_dim: 768,
  attention_head_dim: 8,
};

const count = (shape: readonly number[]) => shape.reduce((a, b) => a * b, 1);
const paramCount = (specs: readonly WeightSpec[]) => specs.reduce((n, s) => n + count(s.shape), 0);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const secs = (t0: number) => (performance.now() - t0) / 1000;

/** Uniform weights with variance 1/fan_in (norm scales 1, biases 0), from a fast xorshift. */
function randomStore(specs: readonly WeightSpec[], seed: number): WeightStore {
  const store = new WeightStore('unet', specs);
  let x = seed >>> 0 || 1;
  for (const s of specs) {
    const tfShape =
      s.kind === 'linear'
        ? [s.shape[1], s.shape[0]]
        : s.kind === 'conv'
          ? [s.shape[2], s.shape[3], s.shape[1], s.shape[0]]
          : [...s.shape];
    const data = new Float32Array(count(s.shape));
    if (s.shape.length >= 2) {
      const k = Math.sqrt(3 / count(s.shape.slice(1))) / 2 ** 31;
      for (let i = 0; i < data.length; i++) {
        x ^= x << 13;
        x ^= x >>> 17;
        x ^= x << 5;
        data[i] = (x | 0) * k;
      }
    } else if (!s.name.endsWith('.bias')) data.fill(1);
    store.adopt(s.name, tf.tensor(data, tfShape, 'float32'));
  }
  return store;
}

function tinyUNet(): UNet2DConditionModel {
  const config = tinyConfigs('sd1').unet as unknown as UNetConfig;
  const store = new WeightStore('unet', unetWeightSpecs(config));
  for (const s of store.specList()) store.setTorch(s.name, s.shape, detWeight(s.name, s.shape));
  return new UNet2DConditionModel(config, store);
}

/** Median seconds per tiny-UNet call after one warm-up, and the last output (for cross-backend diffs). */
async function benchTiny(calls: number): Promise<{ median: number; params: number; out: Float32Array }> {
  const unet = tinyUNet();
  const sample = tf.tensor4d(detInput('bench/sample', [BATCH, 16, 16, 4]), [BATCH, 16, 16, 4]);
  const ctx = tf.tensor3d(detInput('bench/context', [BATCH, 77, 32]), [BATCH, 77, 32]);
  const times: number[] = [];
  let out: Float32Array = new Float32Array(0);
  for (let i = 0; i <= calls; i++) {
    const t0 = performance.now();
    const y = unet.predict(sample, 981, ctx);
    out = (await y.data()) as Float32Array;
    y.dispose();
    if (i > 0) times.push(secs(t0));
  }
  const params = paramCount(unet.weights.specList());
  tf.dispose([sample, ctx]);
  unet.dispose();
  return { median: median(times), params, out };
}

interface StageTiming {
  name: string;
  params: number;
  /** Seconds to make the stage's random weights (not part of a step). */
  weightSeconds: number;
  /** Seconds of compute (forward through the stage, result read back). */
  seconds: number;
}

/**
 * Runs `stage` with freshly made random weights and disposes them afterwards; returns the next
 * activations (the caller disposes the superseded ones).
 */
async function runStage(
  stage: UNetStage,
  specs: readonly WeightSpec[],
  a: UNetActivations,
  context: tf.Tensor,
  seed: number,
): Promise<{ next: UNetActivations; timing: StageTiming }> {
  const own = specs.filter((s) => stage.prefixes.some((p) => s.name.startsWith(p)));
  let t0 = performance.now();
  const store = randomStore(own, seed);
  const weightSeconds = secs(t0);
  t0 = performance.now();
  const next = stage.run((name) => store.get(name), a, 981, context);
  await next.h.data();
  const seconds = secs(t0);
  store.dispose();
  return { next, timing: { name: stage.name, params: paramCount(own), weightSeconds, seconds } };
}

/** A full SD1.5 UNet call, stage by stage, real activations flowing from one stage to the next. */
async function benchSd15Full(): Promise<StageTiming[]> {
  const specs = unetWeightSpecs(SD15_UNET);
  const sample = tf.randomNormal([BATCH, SD15_LATENT, SD15_LATENT, 4], 0, 1, 'float32', 1);
  const context = tf.randomNormal([BATCH, 77, 768], 0, 1, 'float32', 2);
  let a: UNetActivations = { h: sample, skips: [], tembAct: null };
  const timings: StageTiming[] = [];
  for (const [k, stage] of unetStages(SD15_UNET).entries()) {
    const { next, timing } = await runStage(stage, specs, a, context, 1000 + k);
    const kept = new Set([next.h, next.tembAct, ...next.skips]);
    for (const t of [a.h, a.tembAct, ...a.skips]) if (t && !kept.has(t)) t.dispose();
    a = next;
    timings.push(timing);
    console.log(
      `    ${timing.name.padEnd(24)} ${(timing.params / 1e6).toFixed(1).padStart(6)} M params  ${timing.seconds.toFixed(2).padStart(8)} s  (weights made in ${timing.weightSeconds.toFixed(1)} s)`,
    );
  }
  tf.dispose([a.h, a.tembAct as tf.Tensor, sample, context]);
  return timings;
}

/** The mid block alone (8×8 latents, 97 M params), on inputs of the shapes it sees in a step. */
async function benchSd15Mid(): Promise<StageTiming> {
  const stage = unetStages(SD15_UNET).find((s) => s.name === 'mid_block') as UNetStage;
  const side = SD15_LATENT / 8;
  const h = tf.randomNormal([BATCH, side, side, 1280], 0, 1, 'float32', 3);
  const tembAct = tf.randomNormal([BATCH, 1280], 0, 1, 'float32', 4);
  const context = tf.randomNormal([BATCH, 77, 768], 0, 1, 'float32', 2);
  const { next, timing } = await runStage(
    stage,
    unetWeightSpecs(SD15_UNET),
    { h, skips: [], tembAct },
    context,
    7,
  );
  tf.dispose([next.h, h, tembAct, context]);
  return timing;
}

function parseList(arg: string | undefined, fallback: readonly BackendName[]): BackendName[] {
  return (arg?.split(',') as BackendName[] | undefined) ?? [...fallback];
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const value = (flag: string) => args.find((a) => a.startsWith(`${flag}=`))?.split('=')[1];
  const backends = parseList(value('--backends'), BACKEND_PREFERENCE);
  const sd15 = args.some((a) => a === '--sd15' || a.startsWith('--sd15-')) || process.env.BENCH_SD15 === '1';
  // Full SD1.5 steps only where they take minutes; elsewhere the mid block alone, scaled by wasm.
  const sd15Full = parseList(value('--sd15-backends'), ['tensorflow-gpu', 'tensorflow', 'webgpu', 'wasm']);
  console.log(`UNet step benchmark, node ${process.version}, batch ${BATCH} (one CFG step), seconds`);
  const tiny = new Map<BackendName, Float32Array>();
  const full = new Map<BackendName, number>();
  const mid = new Map<BackendName, number>();
  for (const backend of backends) {
    let label: string = backend;
    try {
      await selectBackend(backend, (m) => {
        label = m.replace('@tiffin/diffusion: using backend ', '');
      });
    } catch (e) {
      console.log(
        `${backend}: not available (${(e as Error).message.replace(/^no tfjs backend could be loaded: /, '')})`,
      );
      continue;
    }
    const t = await benchTiny(5);
    tiny.set(backend, t.out);
    const ref = tiny.get('wasm');
    const diff =
      ref && backend !== 'wasm' ? `; max |Δ| vs wasm ${maxAbsDiff(t.out, ref).toExponential(2)}` : '';
    console.log(
      `${label}: tiny UNet (16×16 latents, ${t.params} params): ${t.median.toFixed(4)} s/step (median of 5)${diff}`,
    );
    if (!sd15) continue;
    if (sd15Full.includes(backend)) {
      console.log(`${backend}: SD1.5 UNet, ${SD15_LATENT}×${SD15_LATENT} latents, stage by stage:`);
      try {
        const timings = await benchSd15Full();
        const total = timings.reduce((s, x) => s + x.seconds, 0);
        const made = timings.reduce((s, x) => s + x.weightSeconds, 0);
        const params = timings.reduce((s, x) => s + x.params, 0);
        full.set(backend, total);
        mid.set(backend, timings.find((x) => x.name === 'mid_block')?.seconds ?? Number.NaN);
        console.log(
          `${backend}: SD1.5 UNet (${(params / 1e6).toFixed(1)} M params) ${SD15_LATENT}×${SD15_LATENT}: ${total.toFixed(1)} s/step (sum of stages; ${made.toFixed(1)} s more making weights)`,
        );
      } catch (e) {
        console.log(`${backend}: SD1.5 UNet failed: ${(e as Error).message.split('\n')[0]}`);
      }
    } else {
      const m = await benchSd15Mid();
      mid.set(backend, m.seconds);
      console.log(
        `${backend}: SD1.5 mid block only (${(m.params / 1e6).toFixed(1)} M params, 8×8): ${m.seconds.toFixed(2)} s; a full step is not run here (pass --sd15-backends=${backend})`,
      );
    }
  }
  // Estimates for backends that ran the mid block only: scale a full step by the mid-block ratio.
  for (const [backend, m] of mid) {
    if (full.has(backend)) continue;
    for (const [refName, refFull] of full) {
      const refMid = mid.get(refName) as number;
      console.log(
        `${backend}: estimated SD1.5 step ≈ ${((refFull * m) / refMid).toFixed(0)} s (${refName} step × mid-block ratio ${(m / refMid).toFixed(1)}; estimate, not measured)`,
      );
    }
  }
  if (full.size > 1) {
    const [[a, ta], ...rest] = [...full];
    for (const [b, tb] of rest) console.log(`ratio SD1.5 step ${b}/${a}: ${(tb / ta).toFixed(2)}×`);
  }
}

function maxAbsDiff(a: Float32Array, b: Float32Array): number {
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
}

await main();
// Dawn's device keeps the event loop alive; the benchmark is done.
process.exit(0);
