import { describe, expect, it } from 'vitest';
import { ClipTokenizer } from '../src/tokenizer/clip-tokenizer.js';
import { fixture } from './helpers/fixtures.js';
import { CLIP_MERGE_COUNT, realClipTokenizerFolder, realClipVocab } from './helpers/real-clip-vocab.js';

interface PromptCase {
  prompt: string;
  ids: number[];
  padded77_head: number[];
}
interface TruncationCase {
  prompt: string;
  padded77: number[];
}

const cases = fixture('clip_check.json').tokenizer_real_vocab as (PromptCase | TruncationCase)[];
const promptCases = cases.filter((c): c is PromptCase => 'ids' in c);
const truncation = cases.find((c): c is TruncationCase => 'padded77' in c);
const BOS = 49406;
const EOS = 49407;

describe('CLIP tokenizer on the real CLIP vocabulary (clip_check.json)', () => {
  const sd1 = ClipTokenizer.fromFolder(realClipTokenizerFolder('sd1', 'vocab+merges'));
  const sd2 = ClipTokenizer.fromFolder(realClipTokenizerFolder('sd2', 'vocab+merges'));

  it('derives the standard vocabulary from bpe_simple_vocab_16e6', () => {
    const { vocab, merges, header } = realClipVocab();
    expect(header.endsWith('#version: 0.2')).toBe(true);
    expect(merges.length).toBe(CLIP_MERGE_COUNT);
    expect(CLIP_MERGE_COUNT).toBe(48894);
    expect(Object.keys(vocab).length).toBe(49408); // token strings are all distinct
    expect(vocab['!']).toBe(0);
    expect(vocab.a).toBe(64);
    expect(vocab['a</w>']).toBe(320);
    expect(vocab['<|startoftext|>']).toBe(BOS);
    expect(vocab['<|endoftext|>']).toBe(EOS);
    expect([sd1.bosId, sd1.eosId, sd1.padId, sd1.maxLength]).toEqual([BOS, EOS, EOS, 77]);
    expect([sd2.bosId, sd2.eosId, sd2.padId, sd2.maxLength]).toEqual([BOS, EOS, 0, 77]);
  });

  it('covers the fixture prompts', () => {
    expect(promptCases.length).toBe(8);
    expect(truncation?.prompt).toBe('cat x100');
  });

  for (const c of promptCases) {
    it(`matches the reference ids for ${JSON.stringify(c.prompt)}`, () => {
      expect(sd1.tokenize(c.prompt)).toEqual(c.ids);
      const ids = sd1.encode(c.prompt);
      expect(ids.length).toBe(77);
      expect(ids.slice(0, c.padded77_head.length)).toEqual(c.padded77_head);
      // SD1 pads with <|endoftext|> after the closing EOS.
      expect(ids.slice(c.ids.length + 2).every((i) => i === EOS)).toBe(true);
    });

    it(`pads ${JSON.stringify(c.prompt)} with "!" (id 0) for SD2`, () => {
      const ids = sd2.encode(c.prompt);
      expect(ids.length).toBe(77);
      expect(ids.slice(0, c.ids.length + 2)).toEqual([BOS, ...c.ids, EOS]);
      expect(ids.slice(c.ids.length + 2).every((i) => i === 0)).toBe(true);
    });
  }

  it('truncates a long prompt to 77 tokens ending in EOS, as the reference does', () => {
    const long = 'cat '.repeat(100);
    expect(sd1.encode(long)).toEqual(truncation?.padded77);
    // Truncation leaves no room for padding, so SD2 gives the same ids.
    expect(sd2.encode(long)).toEqual(truncation?.padded77);
    expect(sd1.isTruncated(long)).toBe(true);
    expect(sd1.isTruncated(promptCases[0].prompt)).toBe(false);
  });

  it('cuts after 75 body tokens even inside a multi-token word', () => {
    expect(sd1.tokenize('🍣').length).toBe(2); // one word, two BPE pieces (fixture: 2011, 352)
    const text = `${'horse '.repeat(74)}🍣`;
    const body = sd1.tokenize(text);
    expect(body.length).toBe(76);
    const ids = sd2.encode(text);
    expect(ids).toEqual([BOS, ...body.slice(0, 75), EOS]);
    expect(sd2.isTruncated(text)).toBe(true);
    expect(sd2.isTruncated(`${'horse '.repeat(74)}mars`)).toBe(false);
  });

  it('reads the same vocabulary from a tokenizer.json with [left, right] merges', () => {
    const fromJson = ClipTokenizer.fromFolder(realClipTokenizerFolder('sd1', 'tokenizer.json'));
    for (const c of promptCases) expect(fromJson.encode(c.prompt)).toEqual(sd1.encode(c.prompt));
  });

  it('decodes real-vocabulary ids back to the normalised text', () => {
    expect(sd1.decode(sd1.tokenize('A photo of an Astronaut'))).toBe('a photo of an astronaut');
    expect(sd1.decode(sd1.tokenize('naïve café, crème brûlée'))).toBe('naïve café , crème brûlée');
    expect(sd1.decode(sd1.tokenize('東京タワー at night'))).toBe('東京タワー at night');
    expect(sd1.decode([])).toBe('');
  });
});
