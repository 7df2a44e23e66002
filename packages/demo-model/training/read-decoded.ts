/**
 * Reads back pictures a VAE decoder drew from the exact latents of training pictures (written by
 * `train.py decode-check`) with the evaluator's reader: the ceiling the decoder puts on prompt adherence,
 * with no UNet involved. Run (from packages/demo-model): npx tsx --conditions=source training/read-decoded.ts
 * [decoded.u8 indices.json] (default: training/.cache/decoded.u8 and decoded.json)
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { caption, IMAGE_SIZE, type SceneSpec } from '../src/dataset/attributes.js';
import { allScenes } from '../src/dataset/scenes.js';
import { readScene } from '../src/evaluate/read-scene.js';
import { AccuracyTally, SCORED } from '../src/evaluate/score.js';

const here = dirname(fileURLToPath(import.meta.url));
const decodedPath = process.argv[2] ?? join(here, '.cache', 'decoded.u8');
const indicesPath = process.argv[3] ?? join(here, '.cache', 'decoded.json');
const captions = JSON.parse(readFileSync(join(here, '.cache', 'captions.json'), 'utf8')) as string[];
const indices = JSON.parse(readFileSync(indicesPath, 'utf8')) as number[];
const decoded = readFileSync(decodedPath);
const byCaption = new Map<string, SceneSpec>(allScenes().map((s) => [caption(s), s]));
const px = IMAGE_SIZE * IMAGE_SIZE * 3;
const tally = new AccuracyTally();
// Per size too: small shapes (a few latent cells) are where outlines are hardest to draw.
const bySize = new Map<string, AccuracyTally>();
const misses: string[] = [];
for (const [k, index] of indices.entries()) {
  const scene = byCaption.get(captions[index]);
  if (!scene) throw new Error(`no scene for caption ${captions[index]}`);
  const reading = readScene({
    width: IMAGE_SIZE,
    height: IMAGE_SIZE,
    data: new Uint8Array(decoded.buffer, decoded.byteOffset + k * px, px),
  });
  tally.add(scene, reading);
  if (!bySize.has(scene.size)) bySize.set(scene.size, new AccuracyTally());
  bySize.get(scene.size)?.add(scene, reading);
  if (reading.colour !== scene.colour) misses.push(`${scene.colour}/${scene.background}→${reading.colour}`);
}
const a = tally.accuracy();
process.stdout.write(
  `${tally.count} pictures: ${SCORED.map((s) => `${s} ${(100 * a[s]).toFixed(1)} %`).join(', ')}\n` +
    [...bySize]
      .map(([size, t]) => `  ${size} (${t.count}): shape ${(100 * t.accuracy().shape).toFixed(1)} %\n`)
      .join('') +
    `colour misses: ${misses.slice(0, 24).join(' ')}\n`,
);
