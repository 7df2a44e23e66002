/**
 * Where the time of a one-step 512² image goes (SD-Turbo's way: Euler with trailing spacing, 1 UNet call, guidance 0,
 * the tiny autoencoder decoding), on an SD1.5-shaped folder (scripts/make-sd15-random.ts; an SDXL-shaped one works
 * too: SDXL-Turbo's way) with a TAESD-shaped tiny autoencoder of random weights, beside diffusers on torch f32 with the
 * same weights (bench/torch_image.py one-step, one long-lived process, started after Tiffin's pipeline is loaded) in
 * the same run. Each round runs Tiffin's whole image, timing its text encoder, UNet and tiny decoder calls where the
 * image makes them (bench/image-bench.ts partTimers), then each part alone (UNet call, tiny decode, PNG encode, the
 * image's round trip through a worker thread as the service's model worker sends it, the Euler step on the host),
 * then torch's image; min/median/max over the rounds, the peak RSS of both processes, the load average and the ratios
 * to torch are printed. "Outside the parts" is the image less its own text encoder, UNet and tiny decoder calls.
 * `--beside=<folder>` also loads a second folder (e.g. a BK-SDM-tiny-shaped one,
 * `scripts/make-sd15-random.ts <dir> --unet-family=bk-sdm-tiny`) and times its image after the first's in each round,
 * with the ratio between them. `--size=128` (any multiple of 64) checks the script quickly. bench/README.md has the
 * exact commands.
 *
 * Usage (from packages/diffusion):
 *   nice -n 10 tsx --conditions=source bench/one-step-image.ts <folder> [--threads=2] [--runs=3]
 *     [--weights=int8] [--graphs=<dir, kept between runs>] [--torch-site=<PYTHONPATH for diffusers>] [--no-torch]
 *     [--beside=<folder>] [--size=512]
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { createScheduler } from '../src/schedulers/factory.js';
import { encodeGenerated } from '../src/service/output-format.js';
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
  'one-step-image <folder> [--threads=2] [--runs=3] [--weights=int8] [--graphs=dir] [--torch-site=dir] [--no-torch] [--beside=dir] [--size=512]',
);
const { folder, size, runs } = o;
const beside = o.opt('beside', '');

/** A worker that sends back what it is sent, transferring it (as the service's model worker sends images). */
function echoWorker() {
  const worker = new Worker(
    "const { parentPort } = require('node:worker_threads'); parentPort.on('message', (b) => parentPort.postMessage(b, [b.buffer]));",
    { eval: true },
  );
  return {
    roundTrip: (bytes: Uint8Array) =>
      new Promise<Uint8Array>((resolve) => {
        worker.once('message', resolve);
        worker.postMessage(bytes, [bytes.buffer as ArrayBuffer]);
      }),
    stop: () => worker.terminate(),
  };
}

console.log(
  `load average at start: ${load()}; onnxruntime ${o.threads} threads, ${o.weights} weights, ${size}²`,
);
const vaeTiny = taesdFolder(join(o.graphs, 'taesd-random'));
const [loadSeconds, pipe] = await seconds(() => openPipeline(o, folder, vaeTiny));
console.log(`pipeline loaded in ${loadSeconds.toFixed(1)} s`);
const second = beside ? await openPipeline(o, beside, vaeTiny) : undefined;
const torch = o.withTorch ? await startTorch(o, 'one-step', vaeTiny) : undefined;
const worker = echoWorker();
const timers = partTimers(pipe);
const sdxl = pipe.unet.config.addition_embed_type === 'text_time';

const request = {
  prompt: 'a photo of a red cube on a wooden table',
  height: size,
  width: size,
  num_inference_steps: 1,
  guidance_scale: 0,
  scheduler: 'euler' as const,
  scheduler_config: { timestep_spacing: 'trailing' },
  decoder: 'tiny' as const,
};
const [warm] = await seconds(() => pipe.text2img({ ...request, seed: 0 }));
console.log(`warm-up image: ${warm.toFixed(2)} s (its parts: ${JSON.stringify(timers.take())})`);
if (second) await second.text2img({ ...request, seed: 0 });
const besideImages: number[] = [];

const side = size / 8;
const channels = pipe.unet.config.in_channels;
const sample = {
  data: detInput('bench/latents', [1, side, side, channels]),
  shape: [1, side, side, channels],
};
const t = {
  image: [] as number[],
  text: [] as number[],
  unet: [] as number[],
  tiny: [] as number[],
  outside: [] as number[],
  unetAlone: [] as number[],
  tinyAlone: [] as number[],
  encode: [] as number[],
  copies: [] as number[],
  scheduling: [] as number[],
};
const schedulerConfig = JSON.parse(readFileSync(join(folder, 'scheduler', 'scheduler_config.json'), 'utf8'));
/** The Euler step of the request on host latents: what the pipeline's loop does around its one UNet call. */
const schedule = async () => {
  const s = createScheduler('euler', { ...schedulerConfig, timestep_spacing: 'trailing' });
  s.setTimesteps(1);
  const t0 = s.timesteps[0];
  const latents = { data: sample.data.map((v) => v * s.initNoiseSigma), shape: sample.shape };
  const input = s.scaleModelInput(latents, t0);
  return s.step(input, t0, latents).prevSample;
};
const torchParts = {
  image: [] as number[],
  unet: [] as number[],
  tiny: [] as number[],
  peak: [] as number[],
};
for (let r = 0; r < runs; r++) {
  // Alternated: Tiffin's whole image (its parts timed inside it), each part alone, then torch's image.
  const [image, out] = await seconds(() => pipe.text2img({ ...request, seed: r + 1 }));
  const inside = timers.take();
  t.image.push(image);
  t.text.push(inside.text);
  t.unet.push(inside.unet);
  t.tiny.push(inside.tiny);
  t.outside.push(image - inside.text - inside.unet - inside.tiny);
  if (second) besideImages.push((await seconds(() => second.text2img({ ...request, seed: r + 1 })))[0]);
  if (!sdxl) {
    const context = await pipe.encodePrompt(request.prompt);
    t.unetAlone.push((await seconds(() => pipe.unet.predictOnHost(sample, 999, context)))[0]);
  }
  const tinyDecoder = pipe.tinyDecoder as NonNullable<typeof pipe.tinyDecoder>;
  t.tinyAlone.push((await seconds(() => tinyDecoder.decodeOnHost(sample)))[0]);
  timers.take();
  const pixels = out.images[0].data;
  t.encode.push((await seconds(() => encodeGenerated(pixels, size, size, 'png')))[0]);
  t.copies.push((await seconds(() => worker.roundTrip(Uint8Array.from(pixels))))[0]);
  t.scheduling.push((await seconds(schedule))[0]);
  let torchLine = '';
  if (torch) {
    const tr = await torch.run();
    torchParts.image.push(tr.image);
    torchParts.unet.push(tr.unet);
    torchParts.tiny.push(tr.tiny);
    torchParts.peak.push(tr.peak_rss_gb);
    torchLine = `; torch image ${tr.image.toFixed(2)} s (UNet ${tr.unet.toFixed(2)}, tiny decode ${tr.tiny.toFixed(2)})`;
  }
  console.log(
    `run ${r + 1}: image ${image.toFixed(2)} s (text encoder ${inside.text.toFixed(3)}, UNet ${inside.unet.toFixed(2)}, tiny decode ${inside.tiny.toFixed(2)}, outside them ${t.outside[r].toFixed(3)}); alone: UNet ${t.unetAlone[r]?.toFixed(2) ?? '-'}, tiny decode ${t.tinyAlone[r].toFixed(2)}, PNG ${t.encode[r].toFixed(3)}, worker round trip ${t.copies[r].toFixed(4)} s${torchLine}; load ${load()}`,
  );
}
await torch?.stop();
await worker.stop();

const med = (xs: number[]) => stats(xs).median;
const served = t.image.map((v, i) => v + t.encode[i] + t.copies[i]);
const noText = t.image.map((v, i) => v - t.text[i]);
console.log(
  `\n${size}² one-step images (${o.weights} weights, ${o.threads} threads); Tiffin's peak RSS ${peakRss()}:`,
);
console.log(`  Tiffin image (text2img): ${fmt(t.image)}`);
const part = (name: string, xs: number[]) =>
  console.log(`    ${name} ${fmt(xs)} (${((100 * med(xs)) / med(t.image)).toFixed(0)} % of the image)`);
part('text encoder, in the image', t.text);
part('UNet call, in the image', t.unet);
part('tiny decode, in the image', t.tiny);
part('outside the three (scheduler, noise, tokenizer, copies)', t.outside);
if (t.unetAlone.length) part('UNet call alone', t.unetAlone);
part('tiny decode alone', t.tinyAlone);
part('Euler step alone (host)', t.scheduling);
console.log(`    beside the image: PNG encode ${fmt(t.encode)}, worker round trip ${fmt(t.copies)}`);
console.log(`    as served (image + PNG + round trip): ${fmt(served)}`);
if (second) {
  console.log(
    `  ${beside}: image ${fmt(besideImages)}, ${ratio(besideImages, t.image)} the first folder's per round`,
  );
}
if (torch) {
  console.log(
    `  diffusers on torch f32, without a text encoder: ${fmt(torchParts.image)}; its peak RSS ${Math.max(...torchParts.peak).toFixed(2)} GB`,
  );
  console.log(`    UNet call ${fmt(torchParts.unet)}, tiny decode ${fmt(torchParts.tiny)}`);
  console.log(`  ratios to torch, per round: image without text encoder ${ratio(noText, torchParts.image)}`);
  console.log(`    whole image with text encoder ${ratio(t.image, torchParts.image)}`);
  console.log(
    `    UNet call ${ratio(t.unet, torchParts.unet)}, tiny decode ${ratio(t.tiny, torchParts.tiny)}`,
  );
}
console.log(`load average at end: ${load()}`);
pipe.dispose();
second?.dispose();
