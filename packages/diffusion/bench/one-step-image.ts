/**
 * Where the time of a one-step 512² image goes (SD-Turbo's way: Euler with trailing spacing, 1 UNet call, guidance 0,
 * the tiny autoencoder decoding), on an SD1.5-shaped folder (scripts/make-sd15-random.ts) with a TAESD-shaped tiny
 * autoencoder of random weights, beside diffusers on torch f32 with the same weights (bench/torch_one_step_image.py,
 * one long-lived process) in the same run. Each round runs Tiffin's whole image, then each part alone (text encoder,
 * UNet call, tiny decode, PNG encode, the image's round trip through a worker thread as the service's model worker
 * sends it), the scheduler alone (set_timesteps, scale_model_input, the Euler step on the latents), then torch's
 * image; min/median/max over the rounds, the peak RSS and the load average are printed, and the ratios to torch.
 * What the image took beyond its measured parts is printed as unattributed (noisy on a busy machine: each part is
 * timed in its own call). `--beside=<folder>` also loads a second folder (e.g. a BK-SDM-tiny-shaped one,
 * `scripts/make-sd15-random.ts <dir> --unet-family=bk-sdm-tiny`) and times its image after the first's in each round,
 * with the ratio between them. `--size=128` (any multiple of 64) checks the script quickly.
 *
 * Usage (from packages/diffusion):
 *   nice -n 10 tsx --conditions=source bench/one-step-image.ts <sd15 folder> [--threads=2] [--runs=3]
 *     [--weights=int8] [--graphs=<dir, kept between runs>] [--torch-site=<PYTHONPATH for diffusers>] [--no-torch]
 *     [--beside=<folder>] [--size=512]
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { tinyAutoencoderConfig, tinyDecoderWeightSpecs } from '../src/architectures/tiny-autoencoder.js';
import { parseOnnxWeights } from '../src/engines/onnx/weight-format.js';
import { StableDiffusionPipeline } from '../src/pipeline/pipeline.js';
import { createScheduler } from '../src/schedulers/factory.js';
import { encodeGenerated } from '../src/service/output-format.js';
import { randomWeightsWriter } from '../src/tiny/sd15-random.js';
import { detInput } from '../src/weights/deterministic.js';

const args = process.argv.slice(2);
const folder = args.find((a) => !a.startsWith('--'));
const opt = (name: string, def: string) => args.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? def;
const threads = Number(opt('threads', '2'));
const runs = Number(opt('runs', '3'));
const weights = parseOnnxWeights(opt('weights', 'int8'), '--weights');
const graphs = opt('graphs', join(tmpdir(), 'tiffin-bench-graphs'));
const size = Number(opt('size', '512'));
const torchSite = opt('torch-site', process.env.PYTHONPATH ?? '');
const withTorch = !args.includes('--no-torch');
const beside = opt('beside', '');
if (!folder || size % 64 !== 0) {
  console.error(
    'usage: one-step-image <sd15 folder> [--threads=2] [--runs=3] [--weights=int8] [--graphs=dir] [--torch-site=dir] [--no-torch] [--size=512]',
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
  return `${median.toFixed(3)} s median (${min.toFixed(3)}–${max.toFixed(3)})`;
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
const peakRss = () => `${(process.resourceUsage().maxRSS / 1024 ** 2).toFixed(2)} GB`;

/** diffusers on torch, loaded once: each `run()` is one image's parts in seconds. */
async function startTorch(vaeTiny: string) {
  const script = join(dirname(fileURLToPath(import.meta.url)), 'torch_one_step_image.py');
  const child = spawn(
    '/usr/bin/python3',
    [script, folder as string, vaeTiny, String(threads), String(size)],
    {
      env: { ...process.env, PYTHONPATH: torchSite, HF_HUB_OFFLINE: '1' },
      stdio: ['pipe', 'pipe', 'inherit'],
    },
  );
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const next = async () => {
    const { value, done } = await lines.next();
    if (done) throw new Error('torch_one_step_image.py ended');
    return JSON.parse(value) as Record<string, number>;
  };
  console.log(`torch ready: ${JSON.stringify(await next())}`);
  return {
    run: async () => {
      child.stdin.write('run\n');
      return next();
    },
    stop: () => child.stdin.end(),
  };
}

/** A worker that sends back what it is sent, transferring it (as the service's model worker sends images). */
function echoWorker(): {
  roundTrip: (bytes: Uint8Array) => Promise<Uint8Array>;
  stop: () => Promise<number>;
} {
  const worker = new Worker(
    "const { parentPort } = require('node:worker_threads'); parentPort.on('message', (b) => parentPort.postMessage(b, [b.buffer]));",
    { eval: true },
  );
  return {
    roundTrip: (bytes) =>
      new Promise((resolve) => {
        worker.once('message', resolve);
        worker.postMessage(bytes, [bytes.buffer as ArrayBuffer]);
      }),
    stop: () => worker.terminate(),
  };
}

console.log(`load average at start: ${load()}; onnxruntime ${threads} threads, ${weights} weights, ${size}²`);
const vaeTiny = taesdFolder(join(graphs, 'taesd-random'));
const open = (dir: string) =>
  StableDiffusionPipeline.fromPretrained(dir, {
    backend: 'onnxruntime',
    onnx: { intraOpThreads: threads, weights, cacheDir: graphs },
    vaeTiny,
    log: (m) => console.log(m),
  });
const [loadSeconds, pipe] = await seconds(() => open(folder));
console.log(`pipeline loaded in ${loadSeconds.toFixed(1)} s`);
const second = beside ? await open(beside) : undefined;
const torch = withTorch ? await startTorch(vaeTiny) : undefined;
const worker = echoWorker();

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
console.log(`warm-up image: ${warm.toFixed(2)} s`);
if (second) await second.text2img({ ...request, seed: 0 });
const besideImages: number[] = [];

const side = size / 8;
const sample = { data: detInput('bench/latents', [1, side, side, 4]), shape: [1, side, side, 4] };
const tiffin = {
  image: [] as number[],
  text: [] as number[],
  unet: [] as number[],
  tiny: [] as number[],
  encode: [] as number[],
  copies: [] as number[],
  scheduling: [] as number[],
};
const schedulerConfig = JSON.parse(readFileSync(join(folder, 'scheduler', 'scheduler_config.json'), 'utf8'));
/** The Euler step of the request on host latents: what the pipeline's loop does around its one UNet call. */
const schedule = async () => {
  const s = createScheduler('euler', { ...schedulerConfig, timestep_spacing: 'trailing' });
  s.setTimesteps(1);
  const t = s.timesteps[0];
  const latents = { data: sample.data.map((v) => v * s.initNoiseSigma), shape: sample.shape };
  const input = s.scaleModelInput(latents, t);
  return s.step(input, t, latents).prevSample;
};
const torchParts = {
  image: [] as number[],
  unet: [] as number[],
  tiny: [] as number[],
  scheduling: [] as number[],
};
for (let r = 0; r < runs; r++) {
  // Alternated: Tiffin's whole image, each of its parts alone, then torch's image.
  const [image, out] = await seconds(() => pipe.text2img({ ...request, seed: r + 1 }));
  tiffin.image.push(image);
  if (second) besideImages.push((await seconds(() => second.text2img({ ...request, seed: r + 1 })))[0]);
  const [text, context] = await seconds(() => pipe.encodePrompt(request.prompt));
  tiffin.text.push(text);
  const [unet] = await seconds(() => pipe.unet.predictOnHost(sample, 999, context));
  tiffin.unet.push(unet);
  const [tiny] = await seconds(() =>
    (pipe.tinyDecoder as NonNullable<typeof pipe.tinyDecoder>).decodeOnHost(sample),
  );
  tiffin.tiny.push(tiny);
  const pixels = out.images[0].data;
  const [encode] = await seconds(() => encodeGenerated(pixels, size, size, 'png'));
  tiffin.encode.push(encode);
  const [copies] = await seconds(() => worker.roundTrip(Uint8Array.from(pixels)));
  tiffin.copies.push(copies);
  const [scheduling] = await seconds(schedule);
  tiffin.scheduling.push(scheduling);
  let torchLine = '';
  if (torch) {
    const t = await torch.run();
    for (const k of Object.keys(torchParts) as (keyof typeof torchParts)[]) torchParts[k].push(t[k]);
    torchLine = `; torch image ${t.image.toFixed(2)} s (UNet ${t.unet.toFixed(2)}, tiny decode ${t.tiny.toFixed(2)})`;
  }
  console.log(
    `run ${r + 1}: image ${image.toFixed(2)} s; text encoder ${text.toFixed(3)}, UNet ${unet.toFixed(2)}, tiny decode ${tiny.toFixed(2)}, PNG ${encode.toFixed(3)}, worker round trip ${copies.toFixed(4)} s${torchLine}; load ${load()}`,
  );
}
torch?.stop();
await worker.stop();

const med = (xs: number[]) => stats(xs).median;
const rest = tiffin.image.map(
  (v, i) => v - tiffin.text[i] - tiffin.unet[i] - tiffin.tiny[i] - tiffin.scheduling[i],
);
const served = tiffin.image.map((v, i) => v + tiffin.encode[i] + tiffin.copies[i]);
const noText = tiffin.image.map((v, i) => v - tiffin.text[i]);
console.log(`\n${size}² one-step images (${weights} weights, ${threads} threads); peak RSS ${peakRss()}:`);
console.log(`  Tiffin image (text2img): ${fmt(tiffin.image)}`);
const part = (name: string, xs: number[]) =>
  console.log(`    ${name} ${fmt(xs)} (${((100 * med(xs)) / med(tiffin.image)).toFixed(0)} % of the image)`);
part('text encoder', tiffin.text);
part('UNet call', tiffin.unet);
part('tiny decode', tiffin.tiny);
part('scheduling (Euler, 1 step, on the host)', tiffin.scheduling);
part('unattributed (image − the four above)', rest);
console.log(
  `    beside the image: PNG encode ${fmt(tiffin.encode)}, worker round trip ${fmt(tiffin.copies)}`,
);
console.log(`    as served (image + PNG + round trip): ${fmt(served)}`);
if (second) {
  const per = besideImages.map((v, i) => v / tiffin.image[i]);
  const { min, median, max } = stats(per);
  console.log(
    `  ${beside}: image ${fmt(besideImages)}, ${median.toFixed(2)}× the first folder's per round (${min.toFixed(2)}–${max.toFixed(2)})`,
  );
}
if (torch) {
  console.log(`  diffusers on torch f32, without a text encoder: ${fmt(torchParts.image)}`);
  console.log(
    `    UNet call ${fmt(torchParts.unet)}, tiny decode ${fmt(torchParts.tiny)}, scheduling ${fmt(torchParts.scheduling)}`,
  );
  const ratio = (a: number[], b: number[]) => a.map((v, i) => v / b[i]);
  const show = (xs: number[]) => {
    const { min, median, max } = stats(xs);
    return `${median.toFixed(2)}× median (${min.toFixed(2)}–${max.toFixed(2)})`;
  };
  console.log(
    `  ratios to torch, per round: image without text encoder ${show(ratio(noText, torchParts.image))}`,
  );
  console.log(`    whole image with text encoder ${show(ratio(tiffin.image, torchParts.image))}`);
  console.log(
    `    UNet call ${show(ratio(tiffin.unet, torchParts.unet))}, tiny decode ${show(ratio(tiffin.tiny, torchParts.tiny))}`,
  );
}
console.log(`load average at end: ${load()}`);
pipe.dispose();
second?.dispose();
