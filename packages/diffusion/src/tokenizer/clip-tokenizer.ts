import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BYTE_TO_SYMBOL, SYMBOL_TO_BYTE } from './byte-symbols.js';

const PATTERN =
  /<\|startoftext\|>|<\|endoftext\|>|'s|'t|'re|'ve|'m|'ll|'d|[\p{L}]+|[\p{N}]|[^\s\p{L}\p{N}]+/giu;
const BOS = '<|startoftext|>';
const EOS = '<|endoftext|>';

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

/** CLIP byte-level BPE tokenizer (spec 3), fast-tokenizer normalisation. */
export class ClipTokenizer {
  readonly maxLength: number;
  readonly bosId: number;
  readonly eosId: number;
  readonly padId: number;
  private readonly vocab: ReadonlyMap<string, number>;
  private readonly idToToken: Map<number, string>;
  private readonly ranks = new Map<string, number>();
  private readonly cache = new Map<string, number[]>();

  constructor(opts: ClipTokenizerOptions) {
    this.vocab = new Map(Object.entries(opts.vocab));
    this.idToToken = new Map([...this.vocab].map(([t, i]) => [i, t]));
    opts.merges.forEach((line, rank) => {
      if (!this.ranks.has(line)) this.ranks.set(line, rank);
    });
    this.maxLength = opts.maxLength ?? 77;
    const id = (tok: string) => {
      const v = this.vocab.get(tok);
      if (v === undefined) throw new Error(`tokenizer vocabulary lacks the special token ${tok}`);
      return v;
    };
    this.bosId = id(BOS);
    this.eosId = id(EOS);
    this.padId = id(opts.padToken ?? EOS);
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
    const norm = text.normalize('NFC').replace(/\s+/gu, ' ').trim().toLowerCase();
    const ids: number[] = [];
    for (const m of norm.matchAll(PATTERN)) {
      const word = m[0];
      if (word === BOS) ids.push(this.bosId);
      else if (word === EOS) ids.push(this.eosId);
      else ids.push(...this.bpe(word));
    }
    return ids;
  }

  /** SD prompt encoding: [bos] + tokens[0:max-2] + [eos], padded to maxLength. */
  encode(text: string): number[] {
    const body = this.tokenize(text).slice(0, this.maxLength - 2);
    const ids = [this.bosId, ...body, this.eosId];
    while (ids.length < this.maxLength) ids.push(this.padId);
    return ids;
  }

  /** Whether the text needs more than maxLength - 2 tokens (diffusers warns and truncates). */
  isTruncated(text: string): boolean {
    return this.tokenize(text).length > this.maxLength - 2;
  }

  decode(ids: readonly number[]): string {
    const text = ids
      .map((i) => this.idToToken.get(i) ?? '')
      .join('')
      .replaceAll('</w>', ' ');
    const bytes: number[] = [];
    for (const ch of text) {
      const b = SYMBOL_TO_BYTE.get(ch);
      if (b !== undefined) bytes.push(b);
      else bytes.push(...new TextEncoder().encode(ch));
    }
    return new TextDecoder().decode(Uint8Array.from(bytes)).trim();
  }

  private bpe(word: string): number[] {
    const cached = this.cache.get(word);
    if (cached) return cached;
    const symbols = [...new TextEncoder().encode(word)].map((b) => BYTE_TO_SYMBOL[b]);
    symbols[symbols.length - 1] += '</w>';
    let parts = symbols;
    while (parts.length > 1) {
      let best = -1;
      let bestRank = Number.POSITIVE_INFINITY;
      for (let i = 0; i < parts.length - 1; i++) {
        const r = this.ranks.get(`${parts[i]} ${parts[i + 1]}`);
        if (r !== undefined && r < bestRank) {
          bestRank = r;
          best = i;
        }
      }
      if (best < 0) break;
      const left = parts[best];
      const right = parts[best + 1];
      const next: string[] = [];
      for (let i = 0; i < parts.length; i++) {
        if (i < parts.length - 1 && parts[i] === left && parts[i + 1] === right) {
          next.push(left + right);
          i++;
        } else next.push(parts[i]);
      }
      parts = next;
    }
    const ids = parts.map((p) => this.vocab.get(p) ?? this.eosId);
    this.cache.set(word, ids);
    return ids;
  }
}
