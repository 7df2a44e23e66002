/**
 * Prompt adherence of the demo model, measured not eyeballed: one picture per held-out prompt (never seen
 * in training) through Tiffin's own pipeline, read back by the pixel-level evaluator. Baseline printed in
 * the same run: the evaluator on the dataset's own rendered pictures (it should read them all back).
 *
 * `--phrasing=people`: the held-out scenes asked for in people's words instead of the caption template (big, tiny,
 * center, middle, upper left, "on the left side", gray: `src/evaluate/phrasings.ts`), words no training caption uses (the model ties them to caption words and learnt "side" on training scenes: README).
 *
 * Steps, guidance and scheduler are the model folder's own defaults (`tiffin_defaults.json`) unless given.
 * `--by=<attribute>`: also print each attribute's accuracy per value of that one asked for (e.g. `--by=position`).
 *
 * Usage (from packages/demo-model): pnpm bench [-- --limit=128 --steps=20 --guidance=1.5 --scheduler=ddim --rescale=0
 *   --model=<folder> --split=train --phrasing=people --by=position]
 */
import { cpus, loadavg } from 'node:os';
import { type ModelDefaults, StableDiffusionPipeline } from '@tiffin/diffusion';
import type { SceneSpec } from '../src/dataset/attributes.js';
import { renderScene } from '../src/dataset/render.js';
import { splitScenes } from '../src/dataset/scenes.js';
import { paraphrase } from '../src/evaluate/phrasings.js';
import { readScene } from '../src/evaluate/read-scene.js';
import { evaluatePipeline } from '../src/evaluate/run-evaluation.js';
import { type Accuracy, AccuracyTally, SCORED } from '../src/evaluate/score.js';
import { demoModelDir } from '../src/index.js';

const arg = (name: string, fallback: string) =>
  process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback;
const given = (name: string) => {
  const v = arg(name, '');
  return v === '' ? undefined : Number(v);
};
const limit = Number(arg('limit', '128'));
const steps = given('steps');
const guidance = given('guidance');
const schedulerArg = arg('scheduler', '');
const by = arg('by', '') as keyof SceneSpec | '';
const rescale = Number(arg('rescale', '0'));
const modelDir = arg('model', demoModelDir());
// `--split=train`: training prompts instead (to choose sampling settings without looking at the held-out ones).
const split = arg('split', 'held-out');
const phrasing = arg('phrasing', 'captions');

const pct = (x: number) => `${(100 * x).toFixed(1)} %`.padStart(8);
const row = (label: string, a: Accuracy) =>
  `${label.padEnd(34)}${SCORED.map((k) => `${k} ${pct(a[k])}`).join('  ')}`;

const { train, heldOut } = splitScenes();
// Every 19th training prompt: 130 spread over all shapes and colours (the list is in combination order).
const pool = split === 'train' ? train.filter((_, i) => i % 19 === 0) : heldOut;
const scenes = pool.slice(0, limit);
const truth = new AccuracyTally();
for (const s of scenes) truth.add(s, readScene(renderScene(s)));

const pipe = await StableDiffusionPipeline.fromPretrained(modelDir);
const scheduler = schedulerArg === '' ? undefined : (schedulerArg as NonNullable<ModelDefaults['scheduler']>);
const load0 = loadavg()[0];
const result = await evaluatePipeline(pipe, scenes, {
  steps,
  guidance,
  scheduler,
  guidanceRescale: rescale,
  ...(phrasing === 'people' ? { prompt: paraphrase } : {}),
  onPicture: (i, s) => {
    if ((i + 1) % 16 === 0)
      process.stderr.write(`  ${i + 1}/${scenes.length} pictures, last ${s.toFixed(2)} s\n`);
  },
});
const spread = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return `min ${s[0].toFixed(2)}  median ${s[Math.floor(s.length / 2)].toFixed(2)}  max ${s[s.length - 1].toFixed(2)}`;
};
const setting = (v: unknown, own: unknown) =>
  `${v ?? own ?? 'the folder'}${v === undefined ? ' (model default)' : ''}`;
const breakdown: string[] = [];
if (by !== '') {
  const groups = new Map<string, AccuracyTally>();
  for (const [i, s] of scenes.entries()) {
    const key = String(s[by]);
    if (!groups.has(key)) groups.set(key, new AccuracyTally());
    groups.get(key)?.add(s, result.readings[i]);
  }
  for (const [key, t] of groups) breakdown.push(row(`  ${by} ${key} (${t.count})`, t.accuracy()));
}
process.stdout.write(
  [
    `demo model: ${result.count} ${split === 'train' ? 'training' : 'held-out'} prompts (${phrasing === 'people' ? "people's phrasings" : 'caption words'}), scheduler ${setting(scheduler, pipe.defaults.scheduler)}, ${setting(steps, pipe.defaults.num_inference_steps)} steps, guidance ${setting(guidance, pipe.defaults.guidance_scale)} (rescale ${rescale}), 64×64`,
    row('baseline (dataset pictures)', truth.accuracy()),
    row('demo model', result.accuracy),
    ...breakdown,
    'targets: colour ≥ 95 %, background ≥ 95 %, position ≥ 90 %, shape ≥ 80 %',
    `wall seconds per picture: ${spread(result.seconds)}  (the first includes warm-up)`,
    `CPU seconds per picture:  ${spread(result.cpuSeconds)}  (all threads; load average ${load0.toFixed(1)} → ${loadavg()[0].toFixed(1)} on ${cpus().length} cores)`,
  ].join('\n') + '\n',
);
