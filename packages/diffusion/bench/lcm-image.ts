/**
 * One 512² image the way CPU users make them (LCM: the LCM scheduler, 4 UNet calls, guidance 1 = off, the tiny
 * autoencoder decoding), end to end and per component (timed inside the image, bench/image-bench.ts partTimers), on an
 * SD1.5-shaped folder (scripts/make-sd15-random.ts) with a TAESD-shaped tiny autoencoder of random weights, beside
 * diffusers on torch f32 with the same weights (bench/torch_image.py lcm: LCMScheduler, 4 calls, AutoencoderTiny; one
 * long-lived process) alternated in the same run; then optionally the standard image: 20-step DPM++ 2M, guidance 7.5
 * (40 UNet calls at batch 2), the full VAE (`--dpm-runs=1`, default 0). min/median/max, the peak RSS of both processes
 * and the load average are printed. `--full` also times the full VAE decode alone (what the tiny decoder replaces).
 * `--size=128` (any multiple of 64) checks the script quickly; the figures are for 512. bench/README.md has the exact
 * commands.
 *
 * Usage (from packages/diffusion):
 *   nice -n 10 tsx --conditions=source bench/lcm-image.ts <sd15 folder> [--threads=2] [--runs=3] [--dpm-runs=0]
 *     [--weights=int8] [--graphs=<dir, kept between runs>] [--torch-site=<PYTHONPATH for diffusers>] [--no-torch]
 *     [--full] [--size=512]
 */
import { join } from 'node:path';
import { detInput } from '../src/weights/deterministic.js';
import {
  benchOptions,
  fmt,
  load,
  openPipeline,
  partTimers,
  peakRss,
  ratio,
  seconds,
  startTorch,
  stats,
  taesdFolder,
} from './image-bench.js';

const o = benchOptions(
  'lcm-image <sd15 folder> [--threads=2] [--runs=3] [--dpm-runs=0] [--weights=int8] [--graphs=dir] [--torch-site=dir] [--no-torch] [--full] [--size=512]',
);
const { folder, size, runs } = o;
const dpmRuns = Number(o.opt('dpm-runs', '0'));

console.log(
  `load average at start: ${load()}; onnxruntime ${o.threads} threads, ${o.weights} weights, ${size}²`,
);
const vaeTiny = taesdFolder(join(o.graphs, 'taesd-random'));
const [loadSeconds, pipe] = await seconds(() => openPipeline(o, folder, vaeTiny));
console.log(`pipeline loaded in ${loadSeconds.toFixed(1)} s`);
const torch = o.withTorch ? await startTorch(o, 'lcm', vaeTiny) : undefined;
const timers = partTimers(pipe);

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
const [warm] = await seconds(() => pipe.text2img({ ...lcm, seed: 0 }));
console.log(`warm-up image: ${warm.toFixed(2)} s`);
timers.take();

const side = size / 8;
const sample = { data: detInput('bench/latents', [1, side, side, 4]), shape: [1, side, side, 4] };
const t = {
  image: [] as number[],
  text: [] as number[],
  unet: [] as number[],
  tiny: [] as number[],
  outside: [] as number[],
};
const full: number[] = [];
const torchParts = {
  image: [] as number[],
  unet: [] as number[],
  tiny: [] as number[],
  peak: [] as number[],
};
for (let r = 0; r < runs; r++) {
  // Alternated: Tiffin's image (its parts timed inside it), then torch's.
  const [image] = await seconds(() => pipe.text2img({ ...lcm, seed: r + 1 }));
  const inside = timers.take();
  t.image.push(image);
  t.text.push(inside.text);
  t.unet.push(inside.unet);
  t.tiny.push(inside.tiny);
  t.outside.push(image - inside.text - inside.unet - inside.tiny);
  if (o.args.includes('--full')) full.push((await seconds(() => pipe.vae.decodeOnHost(sample)))[0]);
  let torchLine = '';
  if (torch) {
    const tr = await torch.run();
    torchParts.image.push(tr.image);
    torchParts.unet.push(tr.unet);
    torchParts.tiny.push(tr.tiny);
    torchParts.peak.push(tr.peak_rss_gb);
    torchLine = `; torch image ${tr.image.toFixed(2)} s (4 UNet calls ${tr.unet.toFixed(2)}, tiny decode ${tr.tiny.toFixed(2)})`;
  }
  console.log(
    `run ${r + 1}: image ${image.toFixed(2)} s (text encoder ${inside.text.toFixed(3)}, ${inside.unetCalls} UNet calls ${inside.unet.toFixed(2)}, tiny decode ${inside.tiny.toFixed(2)}, outside them ${t.outside[r].toFixed(3)})${full.length ? `; full VAE decode alone ${full[r].toFixed(2)} s` : ''}${torchLine}; load ${load()}`,
  );
}
await torch?.stop();
const lcmPeak = peakRss();
const dpm: number[] = [];
for (let r = 0; r < dpmRuns; r++) {
  const [image] = await seconds(() => pipe.text2img({ ...standard, seed: 100 + r }));
  dpm.push(image);
  console.log(`standard run ${r + 1}: ${image.toFixed(2)} s; load ${load()}`);
}
const med = (xs: number[]) => stats(xs).median;
const part = (name: string, xs: number[]) =>
  console.log(`    ${name} ${fmt(xs)} (${((100 * med(xs)) / med(t.image)).toFixed(0)} % of the image)`);
console.log(`\n${size}² images (${o.weights} weights, ${o.threads} threads):`);
console.log(`  LCM, 4 steps, guidance off, tiny decoder: ${fmt(t.image)}; Tiffin's peak RSS ${lcmPeak}`);
part('text encoder', t.text);
part('4 UNet calls (batch 1)', t.unet);
part('tiny decode', t.tiny);
part('outside the three (scheduler, noise, tokenizer, copies)', t.outside);
if (full.length) console.log(`    full VAE decode alone (what the tiny one replaces) ${fmt(full)}`);
if (torch) {
  const noText = t.image.map((v, i) => v - t.text[i]);
  console.log(
    `  diffusers on torch f32, without a text encoder: ${fmt(torchParts.image)}; its peak RSS ${Math.max(...torchParts.peak).toFixed(2)} GB`,
  );
  console.log(`    4 UNet calls ${fmt(torchParts.unet)}, tiny decode ${fmt(torchParts.tiny)}`);
  console.log(`  ratios to torch, per round: image without text encoder ${ratio(noText, torchParts.image)}`);
  console.log(`    whole image with text encoder ${ratio(t.image, torchParts.image)}`);
  console.log(
    `    UNet calls ${ratio(t.unet, torchParts.unet)}, tiny decode ${ratio(t.tiny, torchParts.tiny)}`,
  );
}
if (dpm.length)
  console.log(
    `  standard, 20-step DPM++ 2M, guidance 7.5, full VAE: ${fmt(dpm)} (${(med(dpm) / med(t.image)).toFixed(1)}× the LCM image); peak RSS ${peakRss()}`,
  );
console.log(`load average at end: ${load()}`);
pipe.dispose();
