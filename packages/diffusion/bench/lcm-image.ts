/**
 * One 512² image the way CPU users make them (LCM-style: 4 UNet calls, no guidance, the tiny autoencoder decoding),
 * end to end and per component, on an SD1.5-shaped folder (scripts/make-sd15-random.ts) with a TAESD-shaped tiny
 * autoencoder of random weights written beside the graphs. The scheduler is Euler with 4 steps (its own cost is
 * negligible next to a UNet call); guidance 0 (off: batch 1). Runs alternate; min/median/max, peak RSS and the load
 * average are printed. `--full` also times the full VAE decode (what the tiny decoder replaces); `--dpm` one standard
 * 20-step DPM++ 2M image with guidance 7.5 and the full VAE, for comparison.
 *
 * Usage (from packages/diffusion):
 *   nice -n 10 tsx --conditions=source bench/lcm-image.ts <sd15 folder> [--threads=2] [--runs=3]
 *     [--weights=int8] [--graphs=<dir, kept between runs>] [--full] [--dpm]
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
if (!folder) {
  console.error(
    'usage: lcm-image <sd15 folder> [--threads=2] [--runs=3] [--weights=int8] [--graphs=dir] [--full] [--dpm]',
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
  height: 512,
  width: 512,
  num_inference_steps: 4,
  guidance_scale: 0,
  scheduler: 'euler' as const,
  decoder: 'tiny' as const,
};
const [warm] = await seconds(() => pipe.text2img({ ...lcm, seed: 0 }));
console.log(`warm-up image: ${warm.toFixed(2)} s`);

const sample = { data: detInput('bench/latents', [1, 64, 64, 4]), shape: [1, 64, 64, 4] };
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
console.log(
  `\n512² image, 4 steps, no guidance, tiny decoder (${weights} weights, ${threads} threads): ${fmt(images)}`,
);
console.log(`  text encoder ${fmt(parts.text)}`);
console.log(`  UNet call (batch 1) ${fmt(parts.unet)} ×4 = ${(4 * stats(parts.unet).median).toFixed(2)} s`);
console.log(`  tiny decode ${fmt(parts.tiny)}`);
if (parts.full.length) console.log(`  full VAE decode (what the tiny one replaces) ${fmt(parts.full)}`);
if (args.includes('--dpm')) {
  const [dpm] = await seconds(() =>
    pipe.text2img({
      ...lcm,
      num_inference_steps: 20,
      guidance_scale: 7.5,
      scheduler: 'dpmpp_2m',
      decoder: 'full',
      seed: 9,
    }),
  );
  console.log(`standard: 20-step DPM++ 2M, guidance 7.5, full VAE: ${dpm.toFixed(2)} s (one run)`);
}
console.log(
  `peak RSS ${(process.resourceUsage().maxRSS / 1024 ** 2).toFixed(2)} GB; load average at end: ${load()}`,
);
pipe.dispose();
