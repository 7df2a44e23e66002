/**
 * One 512² image the way CPU users make them (LCM: the LCM scheduler, 4 UNet calls, guidance 1 = off, the tiny
 * autoencoder decoding), end to end and per component, on an SD1.5-shaped folder (scripts/make-sd15-random.ts) with a
 * TAESD-shaped tiny autoencoder of random weights written beside the graphs; then the standard image beside it:
 * 20-step DPM++ 2M, guidance 7.5 (40 UNet calls at batch 2), the full VAE. Runs alternate; min/median/max, the peak
 * RSS (process high-water mark, after the LCM runs and again after the standard ones) and the load average are
 * printed. `--full` also times the full VAE decode alone (what the tiny decoder replaces); `--dpm-runs=0` skips the
 * standard image. `--size=128` (any multiple of 64) checks the script quickly; the figures are for 512.
 * bench/README.md has the exact commands, with the torch side (bench/torch_lcm_image.py) for the ratio.
 *
 * Usage (from packages/diffusion):
 *   nice -n 10 tsx --conditions=source bench/lcm-image.ts <sd15 folder> [--threads=2] [--runs=3] [--dpm-runs=1]
 *     [--weights=int8] [--graphs=<dir, kept between runs>] [--full] [--size=512]
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { tinyAutoencoderConfig, tinyDecoderWeightSpecs } from '../src/architectures/tiny-autoencoder.js';
import { parseOnnxWeights } from '../src/engines/onnx/weight-format.js';
import { StableDiffusionPipeline } from '../src/pipeline/pipeline.js';
import { randomWeightsWriter } from '../src/tiny/sd15-random.js';
import { detInput } from '../src/weights/deterministic.js';

const args = process.argv.slice(2);
const folder = args.find((a) => !a.startsWith('--'));
const opt = (name: string, def: string) => args.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? def;
const threads = Number(opt('threads', '2'));
const runs = Number(opt('runs', '3'));
const weights = parseOnnxWeights(opt('weights', 'int8'), '--weights');
const graphs = opt('graphs', join(tmpdir(), 'tiffin-bench-graphs'));
const dpmRuns = Number(opt('dpm-runs', '1'));
const size = Number(opt('size', '512'));
if (!folder || size % 64 !== 0) {
  console.error(
    'usage: lcm-image <sd15 folder> [--threads=2] [--runs=3] [--dpm-runs=1] [--weights=int8] [--graphs=dir] [--full] [--size=512]',
  );
  process.exit(2);
}

/** TAESD's own config (madebyollin/taesd), random weights: the decoder's cost does not depend on their values. */
function taesdFolder(dir: string): string {
  if (existsSync(join(dir, 'diffusion_pytorch_model.safetensors'))) return dir;
  mkdirSync(dir, { recursive: true });
  const raw = { _class_name: 'AutoencoderTiny', scaling_factor: 1.0 };
  writeFileSync(join(dir, 'config.json'), JSON.stringify(raw));
  randomWeightsWriter()(
    join(dir, 'diffusion_pytorch_model.safetensors'),
    tinyDecoderWeightSpecs(tinyAutoencoderConfig(raw, 'config.json')),
    'F32',
  );
  return dir;
}

const stats = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return { min: s[0], median: s[Math.floor(s.length / 2)], max: s[s.length - 1] };
};
const fmt = (xs: number[]) => {
  const { min, median, max } = stats(xs);
  return `${median.toFixed(2)} s median (${min.toFixed(2)}–${max.toFixed(2)})`;
};
const load = () =>
  loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');
const seconds = async <T>(f: () => Promise<T>): Promise<[number, T]> => {
  const t = performance.now();
  const v = await f();
  return [(performance.now() - t) / 1000, v];
};

console.log(`load average at start: ${load()}; onnxruntime ${threads} threads, ${weights} weights`);
const vaeTiny = taesdFolder(join(graphs, 'taesd-random'));
const [loadSeconds, pipe] = await seconds(() =>
  StableDiffusionPipeline.fromPretrained(folder, {
    backend: 'onnxruntime',
    onnx: { intraOpThreads: threads, weights, cacheDir: graphs },
    vaeTiny,
    log: (m) => console.log(m),
  }),
);
console.log(`pipeline loaded in ${loadSeconds.toFixed(1)} s`);

const lcm = {
  prompt: 'a photo of a red cube on a wooden table',
  height: size,
  width: size,
  num_inference_steps: 4,
  guidance_scale: 1,
  scheduler: 'lcm' as const,
  decoder: 'tiny' as const,
};
const standard = {
  ...lcm,
  num_inference_steps: 20,
  guidance_scale: 7.5,
  scheduler: 'dpmpp_2m' as const,
  decoder: 'full' as const,
};
const peakRss = () => `${(process.resourceUsage().maxRSS / 1024 ** 2).toFixed(2)} GB`;
const [warm] = await seconds(() => pipe.text2img({ ...lcm, seed: 0 }));
console.log(`warm-up image: ${warm.toFixed(2)} s`);

const side = size / 8;
const sample = { data: detInput('bench/latents', [1, side, side, 4]), shape: [1, side, side, 4] };
const parts = { text: [] as number[], unet: [] as number[], tiny: [] as number[], full: [] as number[] };
const images: number[] = [];
for (let r = 0; r < runs; r++) {
  // Alternated: a whole image, then each component alone.
  const [image] = await seconds(() => pipe.text2img({ ...lcm, seed: r + 1 }));
  images.push(image);
  const [text, context] = await seconds(() => pipe.encodePrompt(lcm.prompt));
  parts.text.push(text);
  const [unet] = await seconds(() => pipe.unet.predictOnHost(sample, 999, context));
  parts.unet.push(unet);
  const [tiny] = await seconds(() =>
    (pipe.tinyDecoder as NonNullable<typeof pipe.tinyDecoder>).decodeOnHost(sample),
  );
  parts.tiny.push(tiny);
  if (args.includes('--full')) {
    const [full] = await seconds(() => pipe.vae.decodeOnHost(sample));
    parts.full.push(full);
  }
  console.log(
    `run ${r + 1}: image ${image.toFixed(2)} s; text encoder ${text.toFixed(2)} s, one UNet call ${unet.toFixed(2)} s, tiny decode ${tiny.toFixed(2)} s${parts.full.length ? `, full VAE decode ${parts.full.at(-1)?.toFixed(2)} s` : ''}; load ${load()}`,
  );
}
const lcmPeak = peakRss();
const dpm: number[] = [];
for (let r = 0; r < dpmRuns; r++) {
  const [image] = await seconds(() => pipe.text2img({ ...standard, seed: 100 + r }));
  dpm.push(image);
  console.log(`standard run ${r + 1}: ${image.toFixed(2)} s; load ${load()}`);
}
const lcmMedian = stats(images).median;
console.log(`\n${size}² images (${weights} weights, ${threads} threads):`);
console.log(`  LCM, 4 steps, guidance off, tiny decoder: ${fmt(images)}; peak RSS ${lcmPeak}`);
console.log(`    text encoder ${fmt(parts.text)}`);
console.log(`    UNet call (batch 1) ${fmt(parts.unet)} ×4 = ${(4 * stats(parts.unet).median).toFixed(2)} s`);
console.log(`    tiny decode ${fmt(parts.tiny)}`);
console.log(
  `    without the text encoder (what bench/torch_lcm_image.py times): ${(lcmMedian - stats(parts.text).median).toFixed(2)} s`,
);
if (parts.full.length) console.log(`    full VAE decode (what the tiny one replaces) ${fmt(parts.full)}`);
if (dpm.length)
  console.log(
    `  standard, 20-step DPM++ 2M, guidance 7.5, full VAE: ${fmt(dpm)} (${(stats(dpm).median / lcmMedian).toFixed(1)}× the LCM image); peak RSS ${peakRss()}`,
  );
console.log(`load average at end: ${load()}`);
pipe.dispose();
