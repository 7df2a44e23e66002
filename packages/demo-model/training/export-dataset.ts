/**
 * Renders the training pictures and tokenizes their captions with the model's own CLIP tokenizer, for
 * training/train.py. Output (training/.cache, not committed): images.u8 (N×64×64×3 RGB), coverage.u8 (N×64×64 shape coverage), tokens.i32
 * (N×77 ids), captions.json, plus the empty prompt's ids (for classifier-free guidance), and people-tokens.i32 (N×77:
 * each picture's scene in people's words, `src/evaluate/phrasings.ts`, for training/learn_words.py).
 * Run: npx tsx --conditions=source training/export-dataset.ts [variants per scene, default 3]
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ClipTokenizer } from '@tiffin/diffusion';
import { caption, IMAGE_SIZE } from '../src/dataset/attributes.js';
import { renderScene } from '../src/dataset/render.js';
import { jitters, splitScenes } from '../src/dataset/scenes.js';
import { paraphrase } from '../src/evaluate/phrasings.js';

const here = dirname(fileURLToPath(import.meta.url));
const variants = Number(process.argv[2] ?? 3);
const out = join(here, '.cache');
mkdirSync(out, { recursive: true });

const tokenizer = ClipTokenizer.fromFolder(join(here, '../model/tokenizer'));
const { train } = splitScenes();
const nextJitter = jitters(variants, 'tiffin-demo-jitter-1');
const n = train.length * variants;
const px = IMAGE_SIZE * IMAGE_SIZE * 3;
const images = new Uint8Array(n * px);
const coverage = new Uint8Array(n * IMAGE_SIZE * IMAGE_SIZE);
const tokens = new Int32Array(n * 77);
const peopleTokens = new Int32Array(n * 77);
const captions: string[] = [];
let k = 0;
for (const scene of train) {
  const text = caption(scene);
  const ids = tokenizer.encode(text);
  for (let v = 0; v < variants; v++, k++) {
    const picture = renderScene(scene, nextJitter());
    images.set(picture.data, k * px);
    coverage.set(picture.coverage, k * IMAGE_SIZE * IMAGE_SIZE);
    tokens.set(ids, k * 77);
    peopleTokens.set(tokenizer.encode(paraphrase(scene, k)), k * 77);
    captions.push(text);
  }
}
writeFileSync(join(out, 'images.u8'), images);
writeFileSync(join(out, 'coverage.u8'), coverage);
writeFileSync(join(out, 'tokens.i32'), new Uint8Array(tokens.buffer));
writeFileSync(join(out, 'people-tokens.i32'), new Uint8Array(peopleTokens.buffer));
writeFileSync(join(out, 'captions.json'), JSON.stringify(captions));
writeFileSync(join(out, 'empty-tokens.json'), JSON.stringify(tokenizer.encode('')));
process.stdout.write(`${n} pictures (${train.length} scenes × ${variants}) in ${out}\n`);
