/**
 * Peak memory and image fidelity of one weight format (engines/onnx/weight-format.ts) on the ONNX engine: loads the
 * pipeline from a diffusers folder (graphs built into a fresh cache, or `--cache=<dir>` to reuse one), generates one
 * image per seed and prints the process's peak RSS (load plus generation: one format per process, so the figure is
 * that format's), the load and generation times and the load average. `--save=<file>` keeps the images (float32);
 * `--against=<file>` prints the PSNR of these images against saved ones (e.g. int8 against f32, same seeds).
 *
 * Usage (from packages/diffusion):
 *   nice -n 10 tsx --conditions=source bench/onnx-weights-image.ts <folder> --weights=f32 [--size=512] [--steps=4]
 *     [--seeds=1,2] [--threads=2] [--cache=<dir>] [--save=<file>] [--against=<file>]
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseOnnxWeights } from '../src/engines/onnx/weight-format.js';
import { StableDiffusionPipeline } from '../src/pipeline/pipeline.js';

const args = process.argv.slice(2);
const folder = args.find((a) => !a.startsWith('--'));
const opt = (name: string) => args.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
if (!folder || !existsSync(join(folder, 'model_index.json'))) {
  console.error(
    'usage: onnx-weights-image <diffusers folder> --weights=f32|f16|int8 [options: see the file]',
  );
  process.exit(2);
}
const weights = parseOnnxWeights(opt('weights') ?? 'f32', '--weights');
const size = Number(opt('size') ?? 512);
const steps = Number(opt('steps') ?? 4);
const seeds = (opt('seeds') ?? '1').split(',').map(Number);
const threads = Number(opt('threads') ?? 2);
const cache = opt('cache');
const cacheDir = cache ?? mkdtempSync(join(tmpdir(), 'tiffin-weights-bench-'));
const gb = () => (process.resourceUsage().maxRSS / 1024 / 1024).toFixed(2);
const load = () =>
  loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');

console.log(`${weights}: load average before ${load()}`);
let t0 = performance.now();
const pipe = await StableDiffusionPipeline.fromPretrained(folder, {
  backend: 'onnxruntime',
  onnx: { cacheDir, weights, precision: 'f32', intraOpThreads: threads },
  log: (m) => console.log(m),
});
console.log(`${weights}: loaded in ${((performance.now() - t0) / 1000).toFixed(1)} s, peak RSS ${gb()} GB`);
const images: Float32Array[] = [];
for (const seed of seeds) {
  t0 = performance.now();
  const { images: out } = await pipe.text2img({
    prompt: 'a photograph of an astronaut riding a horse',
    height: size,
    width: size,
    num_inference_steps: steps,
    guidance_scale: 7.5,
    seed,
    return_float: true,
  });
  images.push(out[0].float as Float32Array);
  console.log(
    `${weights}: seed ${seed}, ${size}², ${steps} steps in ${((performance.now() - t0) / 1000).toFixed(1)} s (load ${load()})`,
  );
}
console.log(`${weights}: peak RSS (load + generation) ${gb()} GB`);
pipe.dispose();
if (!cache) rmSync(cacheDir, { recursive: true, force: true });

const all = new Float32Array(images.reduce((n, i) => n + i.length, 0));
let at = 0;
for (const i of images) {
  all.set(i, at);
  at += i.length;
}
const save = opt('save');
if (save) writeFileSync(save, Buffer.from(all.buffer));
const against = opt('against');
if (against) {
  const ref = new Float32Array(new Uint8Array(readFileSync(against)).buffer);
  const per = ref.length / seeds.length;
  seeds.forEach((seed, k) => {
    let se = 0;
    for (let i = k * per; i < (k + 1) * per; i++) se += (ref[i] - all[i]) ** 2;
    console.log(
      `${weights}: seed ${seed} PSNR against ${against}: ${(10 * Math.log10(per / se)).toFixed(1)} dB`,
    );
  });
}
