import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeTinyPipeline } from '../src/tiny/write-tiny-pipeline.js';
import { ClipTokenizer } from '../src/tokenizer/clip-tokenizer.js';
import {
  ignoredWordsHeader,
  MAX_IGNORED_HEADER_BYTES,
  MAX_IGNORED_WORDS,
  PromptVocabulary,
} from '../src/tokenizer/ignored-words.js';
import { bytesToFloat32 } from '../src/weights/dtype.js';
import { SafetensorsFile, type TensorToWrite, writeSafetensors } from '../src/weights/safetensors.js';

/** A tiny SD folder whose text encoder has all-zero embedding rows for the tokens of `words` (as the demo's). */
function folderWithout(words: string[]): string {
  const dir = writeTinyPipeline(mkdtempSync(join(tmpdir(), 'tiffin-ignored-')));
  const tokenizer = ClipTokenizer.fromFolder(join(dir, 'tokenizer'));
  const path = join(dir, 'text_encoder', 'model.safetensors');
  const file = SafetensorsFile.open(path);
  const tensors: Record<string, TensorToWrite> = {};
  for (const name of file.names()) {
    const entry = file.entry(name);
    tensors[name] = {
      shape: entry.shape,
      data: bytesToFloat32(file.readBytes(name), entry.dtype),
      dtype: 'F16',
    };
  }
  file.close();
  const table = tensors['text_model.embeddings.token_embedding.weight']!;
  const width = table.shape[1]!;
  for (const id of words.flatMap((w) => tokenizer.tokenize(w)))
    table.data.fill(0, id * width, (id + 1) * width);
  writeSafetensors(path, tensors);
  return dir;
}

describe('PromptVocabulary: the words a model cannot represent', () => {
  it('names the words whose every token has a zero embedding row, once each, in prompt order', async () => {
    const vocabulary = (await PromptVocabulary.fromModelFolder(folderWithout(['dog', 'mars'])))!;
    expect(vocabulary.ignoredWords('A photo of a DOG riding a horse on Mars, dog cat')).toEqual([
      'dog',
      'mars',
    ]);
    // Words the table represents are not named.
    expect(vocabulary.ignoredWords('a photo of an astronaut riding a horse')).toEqual([]);
  });

  it('bounds what it names: words, their length, the header', () => {
    const tokenizer = ClipTokenizer.fromFolder(
      join(writeTinyPipeline(mkdtempSync(join(tmpdir(), 'tiffin-ignored-'))), 'tokenizer'),
    );
    // Every token unrepresented: every distinct word is named, up to the bound.
    const all = PromptVocabulary.of(tokenizer, new Set(Array.from({ length: 50_000 }, (_, i) => i)));
    const prompt = Array.from({ length: 100 }, (_, i) => `w${'x'.repeat(i)}`).join(' ');
    const words = all.ignoredWords(`${'é'.repeat(500)} ${prompt}`);
    expect(words).toHaveLength(MAX_IGNORED_WORDS);
    expect(words[0]).toBe('é'.repeat(64));
    const header = ignoredWordsHeader(words)!;
    expect(header.length).toBeLessThanOrEqual(MAX_IGNORED_HEADER_BYTES);
    expect(header.split(',').map(decodeURIComponent)).toEqual(words.slice(0, header.split(',').length));
    expect(ignoredWordsHeader(['café', 'a,b'])).toBe('caf%C3%A9,a%2Cb');
    expect(ignoredWordsHeader([])).toBeUndefined();
  });

  it('is null for a folder without a tokenizer folder', async () => {
    expect(await PromptVocabulary.fromModelFolder(mkdtempSync(join(tmpdir(), 'tiffin-empty-')))).toBeNull();
  });
});
