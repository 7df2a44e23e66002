import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tinyConfigs } from '../src/tiny/tiny-configs.js';
import { tinyTokenizerFiles } from '../src/tiny/tiny-tokenizer.js';
import { BYTE_TO_SYMBOL } from '../src/tokenizer/byte-symbols.js';
import { ClipTokenizer } from '../src/tokenizer/clip-tokenizer.js';

function folder(flavour: 'sd1' | 'sd2', asTokenizerJson = false): string {
  const dir = mkdtempSync(join(tmpdir(), 'tok-'));
  const { vocab, merges } = tinyTokenizerFiles();
  const c = tinyConfigs(flavour);
  if (asTokenizerJson) {
    writeFileSync(join(dir, 'tokenizer.json'), JSON.stringify({ model: { vocab, merges } }));
  } else {
    writeFileSync(join(dir, 'vocab.json'), JSON.stringify(vocab));
    writeFileSync(join(dir, 'merges.txt'), `#version: 0.2\n${merges.join('\n')}\n`);
  }
  writeFileSync(
    join(dir, 'special_tokens_map.json'),
    JSON.stringify({ ...c.specialTokens, pad_token: { content: c.specialTokens.pad_token } }),
  );
  writeFileSync(join(dir, 'tokenizer_config.json'), JSON.stringify(c.tokenizerConfig));
  return dir;
}

describe('CLIP tokenizer', () => {
  const sd1 = ClipTokenizer.fromFolder(folder('sd1'));

  it('builds the spec-11.2 tiny vocabulary', () => {
    const { vocab, merges } = tinyTokenizerFiles();
    expect(merges.length).toBe(55);
    expect(Object.keys(vocab).length).toBe(569);
    expect(vocab['!']).toBe(0);
    expect(vocab.a).toBe(64);
    expect(vocab['a</w>']).toBe(320);
    expect(vocab['<|startoftext|>']).toBe(567);
    expect(BYTE_TO_SYMBOL[32]).toBe('Ġ');
  });

  it('encodes the spec example with sd1 and sd2 padding', () => {
    const head = [567, 320, 515, 516, 517, 525, 530, 320, 534, 535, 538, 568];
    const ids = sd1.encode('a photo of an astronaut riding a horse on mars');
    expect(ids.slice(0, 12)).toEqual(head);
    expect(ids.length).toBe(77);
    expect(ids.slice(12).every((i) => i === 568)).toBe(true);
    const sd2 = ClipTokenizer.fromFolder(folder('sd2'));
    const ids2 = sd2.encode('a photo of an astronaut riding a horse on mars');
    expect(ids2.slice(0, 12)).toEqual(head);
    expect(ids2.slice(12).every((i) => i === 0)).toBe(true);
  });

  it('reads tokenizer.json when vocab.json/merges.txt are absent', () => {
    const t = ClipTokenizer.fromFolder(folder('sd1', true));
    expect(t.encode('cat dog')).toEqual(sd1.encode('cat dog'));
  });

  it('normalises case and whitespace, splits digits and punctuation', () => {
    expect(sd1.tokenize('  A   Photo\tOF\n')).toEqual(sd1.tokenize('a photo of'));
    // digits split one per token: "12" → '1</w>', '2</w>'
    const { vocab } = tinyTokenizerFiles();
    expect(sd1.tokenize('12')).toEqual([vocab['1</w>'], vocab['2</w>']]);
    expect(sd1.tokenize("cat's")).toEqual([...sd1.tokenize('cat'), vocab["'"], vocab['s</w>']]);
    expect(sd1.tokenize('!!')).toEqual([vocab['!'], vocab['!</w>']]);
  });

  it('maps literal special tokens and non-ASCII bytes', () => {
    expect(sd1.tokenize('<|startoftext|>cat<|endoftext|>')).toEqual([567, ...sd1.tokenize('cat'), 568]);
    const ids = sd1.tokenize('é');
    expect(ids.length).toBe(2); // two UTF-8 bytes, no merges in the tiny vocab
    expect(sd1.decode(ids)).toBe('é');
  });

  it('empty prompt and truncation', () => {
    const empty = sd1.encode('');
    expect(empty.slice(0, 3)).toEqual([567, 568, 568]);
    const long = 'cat '.repeat(100);
    const ids = sd1.encode(long);
    expect(ids.length).toBe(77);
    expect(ids[76]).toBe(568);
    expect(sd1.isTruncated(long)).toBe(true);
    expect(sd1.isTruncated('cat')).toBe(false);
  });

  it('decodes back to text', () => {
    expect(sd1.decode(sd1.tokenize('a photo of an astronaut'))).toBe('a photo of an astronaut');
  });
});
