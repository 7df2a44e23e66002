/**
 * The cost of one ControlNet per step: an SD1.5 UNet step (64×64 latents = 512², batch 2 = one guided step) on
 * onnxruntime, plain, against the same step with one SD1.5-shaped ControlNet (its forward pass, then the UNet graph
 * that takes its residuals), runs alternated, min/median/max of each, the ratio, the load average. One weight format
 * per process (`--weights=f32` or `int8`: the ControlNet's graph follows the UNet's, as the pipeline loads them).
 * The ControlNet (random weights, SD1.5's ControlNetModel config) is written once into `--controlnet=<dir>`.
 *
 * Usage (from packages/diffusion), with a folder from scripts/make-sd15-random.ts:
 *   nice -n 10 tsx --conditions=source bench/onnx-controlnet-step.ts <sd15 folder> --controlnet=<dir>
 *     [--weights=f32|int8] [--threads=2] [--runs=3] [--latent=64] [--graphs=<dir, kept between runs>]
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadOrt } from '@tiffin/onnx';
import { controlNetWeightSpecs } from '../src/architectures/controlnet.js';
import { type ControlNetConfig, controlNetConfigFrom } from '../src/architectures/controlnet-config.js';
import { contextWidth, type UNetConfig } from '../src/architectures/unet-config.js';
import { buildControlNetGraph } from '../src/engines/onnx/controlnet-graph.js';
import { OnnxControlNet } from '../src/engines/onnx/controlnet-model.js';
import { ensureGraph } from '../src/engines/onnx/graph-cache.js';
import { LoraInputs } from '../src/engines/onnx/lora-inputs.js';
import { OnnxUNet } from '../src/engines/onnx/models.js';
import { sessionOptions } from '../src/engines/onnx/session.js';
import { buildUNetGraph } from '../src/engines/onnx/unet-graph.js';
import { parseOnnxWeights } from '../src/engines/onnx/weight-format.js';
import { SafetensorsWeightSource } from '../src/engines/onnx/weight-source.js';
import { randomWeightsWriter } from '../src/tiny/sd15-random.js';
import { detInput } from '../src/weights/deterministic.js';

const args = process.argv.slice(2);
const folder = args.find((a) => !a.startsWith('--'));
const value = (name: string) => args.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
const opt = (name: string, def: number) => Number(value(name) ?? def);
const threads = opt('threads', 2);
const runs = opt('runs', 3);
const HW = opt('latent', 64);
const weights = parseOnnxWeights(value('weights') ?? 'f32', '--weights');
const controlDir = value('controlnet');
if (!folder || !existsSync(join(folder, 'unet', 'config.json')) || !controlDir) {
  console.error(
    'usage: onnx-controlnet-step <sd15 folder> --controlnet=<dir> [--weights=f32|int8] [--runs=3]',
  );
  process.exit(2);
}
const graphs = value('graphs') ?? join(mkdtempSync(join(tmpdir(), 'tiffin-bench-')), 'graphs');
const unetConfig = JSON.parse(readFileSync(join(folder, 'unet', 'config.json'), 'utf8')) as UNetConfig;
const cnFile = join(controlDir, 'diffusion_pytorch_model.safetensors');
if (!existsSync(cnFile)) {
  const t0 = performance.now();
  const config = controlNetConfigFrom(unetConfig, { conditioning_embedding_out_channels: [16, 32, 96, 256] });
  mkdirSync(controlDir, { recursive: true });
  writeFileSync(join(controlDir, 'config.json'), `${JSON.stringify(config, null, 2)}\n`);
  randomWeightsWriter(0x51ed270b)(cnFile, controlNetWeightSpecs(config), 'F16');
  console.log(`wrote an SD1.5-shaped random ControlNet in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
}
const cnConfig = JSON.parse(readFileSync(join(controlDir, 'config.json'), 'utf8')) as ControlNetConfig;

const ort = await loadOrt();
const open = async (
  name: string,
  key: unknown,
  file: string,
  build: Parameters<typeof ensureGraph>[1]['build'],
) => {
  const source = new SafetensorsWeightSource(name, [file]);
  const t0 = performance.now();
  const g = ensureGraph(graphs, { name, key, source, loraTarget: () => false, weights, build });
  source.close();
  const t1 = performance.now();
  const session = await ort.InferenceSession.create(
    g.modelPath,
    sessionOptions({ providers: ['cpu'], threads, skipped: [] }),
  );
  console.log(
    `${name} ${weights}: graph ${g.built ? 'built' : 'cached'} in ${((t1 - t0) / 1000).toFixed(1)} s, session in ${((performance.now() - t1) / 1000).toFixed(1)} s`,
  );
  return { g, session };
};
const unetFile = join(folder, 'unet', 'diffusion_pytorch_model.safetensors');
const opts = { kind: 'fused' as const };
const plain = await open('unet', { unetConfig }, unetFile, (g) => buildUNetGraph(g, unetConfig, opts));
const controlled = await open('unet_controlnet', { unetConfig, controlResiduals: true }, unetFile, (g) =>
  buildUNetGraph(g, unetConfig, opts, true),
);
const net = await open('controlnet', { cnConfig }, cnFile, (g) => buildControlNetGraph(g, cnConfig, opts));
const plainUNet = new OnnxUNet(unetConfig, ort, plain.session, new LoraInputs(ort, plain.g.loraBranches));
const controlUNet = new OnnxUNet(
  unetConfig,
  ort,
  controlled.session,
  new LoraInputs(ort, controlled.g.loraBranches),
);
const controlNet = new OnnxControlNet(cnConfig, ort, net.session);

const B = 2;
// The image is the latents' size times the conditioning embedding's downsampling (SD: 8).
const P = HW * 2 ** ((cnConfig.conditioning_embedding_out_channels?.length ?? 4) - 1);
const Dc = contextWidth(unetConfig);
const sample = { data: detInput('bench/sample', [B, HW, HW, 4]), shape: [B, HW, HW, 4] };
const context = { data: detInput('bench/context', [B, 77, Dc]), shape: [B, 77, Dc] };
const image = {
  data: detInput('bench/image', [B, P, P, 3], 0.25).map((v) => v + 0.5),
  shape: [B, P, P, 3],
};
const timed = async (f: () => Promise<unknown>) => {
  const t0 = performance.now();
  await f();
  return (performance.now() - t0) / 1000;
};
const plainStep = () => plainUNet.predictOnHost(sample, 500, context);
const controlStep = async () => {
  const residuals = await controlNet.residualsOnHost(sample, 500, context, image);
  return controlUNet.predictOnHost(sample, 500, context, undefined, undefined, residuals);
};
console.log(
  `warm-up (load ${loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')})`,
);
await plainStep();
await controlStep();
const a: number[] = [];
const b: number[] = [];
for (let r = 0; r < runs; r++) {
  a.push(await timed(plainStep));
  b.push(await timed(controlStep));
  console.log(
    `run ${r + 1}: plain ${a[r].toFixed(2)} s, with one ControlNet ${b[r].toFixed(2)} s (${(b[r] / a[r]).toFixed(2)}×), load ${loadavg()[0].toFixed(1)}`,
  );
}
const stats = (xs: number[]) => {
  const s = [...xs].sort((x, y) => x - y);
  return `min ${s[0].toFixed(2)} s, median ${s[Math.floor(s.length / 2)].toFixed(2)} s, max ${s[s.length - 1].toFixed(2)} s`;
};
const ratios = a.map((x, k) => b[k] / x).sort((x, y) => x - y);
console.log(
  `${weights}, ${P}², batch ${B}, ${threads} threads: plain step ${stats(a)}; with one ControlNet ${stats(b)}; ratio per run min ${ratios[0].toFixed(2)}×, median ${ratios[Math.floor(runs / 2)].toFixed(2)}×, max ${ratios[runs - 1].toFixed(2)}×; load ${loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}`,
);
plainUNet.dispose();
controlUNet.dispose();
controlNet.dispose();
