import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Tokenizer } from '@huggingface/tokenizers';
import { BOS_TOKEN, clipPipelineDescription, EOS_TOKEN } from './clip-pipeline.js';

export interface ClipTokenizerOptions {
  vocab: Readonly<Record<string, number>>;
  /** Merge lines in rank order, each "left right". */
  merges: readonly string[];
  padToken?: string;
  maxLength?: number;
}

type TokenSpec = string | { content: string } | null | undefined;
const tokenText = (t: TokenSpec): string | undefined =>
  typeof t === 'string' ? t : (t?.content ?? undefined);

/**
 * CLIP byte-level BPE tokenizer (docs/spec/diffusion.md §3). Normalisation, splitting and BPE run in
 * @huggingface/tokenizers; this class adds the SD prompt layout: BOS, EOS, truncation and padding to
 * `maxLength` with the folder's pad token.
 */
export class ClipTokenizer {
  readonly maxLength: number;
  readonly bosId: number;
  readonly eosId: number;
  readonly padId: number;
  /** The id of a comma ending a word (`,</w>`), where long prompts prefer to break (`prompt-chunks.ts`). */
  readonly commaId: number | undefined;
  private readonly tokenizer: Tokenizer;

  constructor(opts: ClipTokenizerOptions) {
    const id = (tok: string) => {
      const v = opts.vocab[tok];
      if (v === undefined) throw new Error(`tokenizer vocabulary lacks the special token ${tok}`);
      return v;
    };
    this.bosId = id(BOS_TOKEN);
    this.eosId = id(EOS_TOKEN);
    this.padId = id(opts.padToken ?? EOS_TOKEN);
    this.maxLength = opts.maxLength ?? 77;
    this.commaId = opts.vocab[',</w>'];
    const description = clipPipelineDescription(opts.vocab, opts.merges, {
      bos: this.bosId,
      eos: this.eosId,
    });
    this.tokenizer = new Tokenizer(description, {});
  }

  /** Load from a diffusers `tokenizer/` folder (vocab.json, merges.txt, special tokens; tokenizer.json if alone). */
  static fromFolder(dir: string): ClipTokenizer {
    const read = (f: string) => JSON.parse(readFileSync(join(dir, f), 'utf8')) as Record<string, unknown>;
    let vocab: Record<string, number>;
    let merges: string[];
    if (existsSync(join(dir, 'vocab.json')) && existsSync(join(dir, 'merges.txt'))) {
      vocab = read('vocab.json') as Record<string, number>;
      merges = readFileSync(join(dir, 'merges.txt'), 'utf8')
        .split('\n')
        .filter((l, i) => !(i === 0 && l.startsWith('#version')) && l.trim() !== '');
    } else if (existsSync(join(dir, 'tokenizer.json'))) {
      const model = read('tokenizer.json').model as {
        vocab: Record<string, number>;
        merges: (string | [string, string])[];
      };
      vocab = model.vocab;
      merges = model.merges.map((m) => (Array.isArray(m) ? m.join(' ') : m));
    } else {
      throw new Error(`tokenizer folder ${dir} has neither vocab.json + merges.txt nor tokenizer.json`);
    }
    let padToken: string | undefined;
    let maxLength: number | undefined;
    for (const f of ['special_tokens_map.json', 'tokenizer_config.json']) {
      if (!existsSync(join(dir, f))) continue;
      const j = read(f);
      padToken = tokenText(j.pad_token as TokenSpec) ?? padToken;
      if (typeof j.model_max_length === 'number' && j.model_max_length < 1e6) maxLength = j.model_max_length;
    }
    return new ClipTokenizer({ vocab, merges, padToken, maxLength });
  }

  /** Token ids of a text, without BOS/EOS. */
  tokenize(text: string): number[] {
    return this.tokenizer.encode(text, { add_special_tokens: false }).ids;
  }

  /** SD prompt encoding: [bos] + tokens[0:max-2] + [eos], padded to maxLength. */
  encode(text: string): number[] {
    return this.layout(this.tokenize(text));
  }

  /** Token ids laid out as one prompt: [bos] + tokens[0:max-2] + [eos], padded to maxLength. */
  layout(tokens: readonly number[]): number[] {
    const ids = [this.bosId, ...tokens.slice(0, this.maxLength - 2), this.eosId];
    while (ids.length < this.maxLength) ids.push(this.padId);
    return ids;
  }

  /** Whether the text needs more than maxLength - 2 tokens (diffusers warns and truncates). */
  isTruncated(text: string): boolean {
    return this.tokenize(text).length > this.maxLength - 2;
  }

  /** Text of token ids, for logging: `</w>` becomes a space, bytes are UTF-8 decoded, ends trimmed. */
  decode(ids: readonly number[]): string {
    if (ids.length === 0) return '';
    return this.tokenizer.decode([...ids], { clean_up_tokenization_spaces: false }).trim();
  }
}
