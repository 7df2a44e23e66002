/**
 * Does the demo ControlNet guide? One picture per held-out pair (`src/evaluate/controlnet-pairs.ts`: the prompt
 * asks for one scene, the Canny map, Tiffin's `cannyEdges` as `module: "canny"` computes it, is drawn from a
 * scene of another shape and position) through Tiffin's pipeline, read back by the evaluator. Baseline in the
 * same run: the same prompts and seeds without the ControlNet, scored against the same maps.
 *
 * Usage (from packages/demo-model):
 *   taskset -c 1 npx tsx --conditions=source bench/controlnet.ts [--limit=128 --scale=1 --controlnet=<folder>]
 */
import { loadavg } from 'node:os';
import { StableDiffusionPipeline } from '@tiffin/diffusion';
import { cannyEdges } from '@tiffin/diffusion/testing';
import { caption } from '../src/dataset/attributes.js';
import { renderScene } from '../src/dataset/render.js';
import { controlNetPairs, type PairScore, scorePair } from '../src/evaluate/controlnet-pairs.js';
import { readScene } from '../src/evaluate/read-scene.js';
import { demoControlNetDir, demoModelDir } from '../src/index.js';

const arg = (name: string, fallback: string) =>
  process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback;
const limit = Number(arg('limit', '128'));
const scale = Number(arg('scale', '1'));
const controlnetDir = arg('controlnet', demoControlNetDir());

const pairs = controlNetPairs().slice(0, limit);
const pipe = await StableDiffusionPipeline.fromPretrained(demoModelDir(), {
  backend: 'onnxruntime',
  controlnets: { canny: controlnetDir },
  log: () => {},
});
const load0 = loadavg()[0];
const KEYS = ['followsMap', 'shape', 'position', 'size', 'colour', 'background'] as const;
const tally = (scores: PairScore[]) =>
  KEYS.map((k) => `${k} ${((100 * scores.filter((s) => s[k]).length) / scores.length).toFixed(1)} %`).join(
    '  ',
  );
const withNet: PairScore[] = [];
const without: PairScore[] = [];
for (const [i, pair] of pairs.entries()) {
  const map = cannyEdges(renderScene(pair.map));
  const prompt = caption(pair.prompt);
  const guided = await pipe.text2img({
    prompt,
    seed: i,
    controlnet: [{ model: 'canny', image: map, conditioning_scale: scale }],
  });
  withNet.push(scorePair(pair, readScene(guided.images[0])));
  const plain = await pipe.text2img({ prompt, seed: i });
  without.push(scorePair(pair, readScene(plain.images[0])));
  if ((i + 1) % 16 === 0) process.stderr.write(`  ${i + 1}/${pairs.length} pairs\n`);
}
pipe.dispose();
process.stdout.write(
  [
    `demo ControlNet: ${pairs.length} held-out pairs (prompt of one scene, Canny map of another shape and position), folder defaults, conditioning_scale ${scale}`,
    `with the ControlNet:    ${tally(withNet)}`,
    `without (baseline):     ${tally(without)}`,
    'followsMap, shape, position, size: as the map; colour, background: as the prompt',
    `load average ${load0.toFixed(1)} → ${loadavg()[0].toFixed(1)}`,
  ].join('\n') + '\n',
);
