import { existsSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { componentWeightFiles } from '../weights/folder.js';
import { SafetensorsFile } from '../weights/safetensors.js';
import { EOS_TOKEN } from './clip-pipeline.js';
import { ClipTokenizer } from './clip-tokenizer.js';

/** Most words one answer names, and most bytes of their header value (`Tiffin-Ignored-Words`). */
export const MAX_IGNORED_WORDS = 32;
export const MAX_IGNORED_HEADER_BYTES = 1024;
/** Distinct words of one prompt looked at: the encoder reads at most 600 tokens (8 chunks of 75), a word is one or more. */
const MAX_WORDS_CHECKED = 600;
/** Longest word named (longer ones are cut). */
const MAX_WORD_CHARS = 64;
const TOKEN_EMBEDDING = 'text_model.embeddings.token_embedding.weight';
/** Bytes read at a time while looking for all-zero embedding rows (a large table is never held whole). */
const SCAN_BYTES = 1 << 20;
/** Words of a prompt as CLIP's pre-tokenizer splits them: runs of letters, and digits. */
const WORD = /[\p{L}\p{M}]+|\p{N}/gu;

/**
 * Which words of a prompt the model cannot represent (docs/spec/diffusion.md §3): every token of the word is the
 * tokenizer's unknown piece or has an all-zero row in the text encoder's embedding table (a model trained on a
 * small vocabulary, as the demo, leaves the rest of CLIP's table zero). Such a word changes nothing in the image;
 * the service names them to the client instead of ignoring them silently.
 */
export class PromptVocabulary {
  private constructor(
    private readonly tokenizer: ClipTokenizer,
    private readonly unrepresented: ReadonlySet<number>,
    private readonly unknownId: number,
  ) {}

  /**
   * The vocabulary of a diffusers folder: its `tokenizer/` and the zero rows of `text_encoder/`'s embedding
   * table; null for a folder without them (a single-file checkpoint), which then reports nothing.
   */
  static async fromModelFolder(modelDir: string): Promise<PromptVocabulary | null> {
    const tokenizerDir = join(modelDir, 'tokenizer');
    if (!existsSync(tokenizerDir)) return null;
    const tokenizer = ClipTokenizer.fromFolder(tokenizerDir);
    const zeroRows = await zeroEmbeddingRows(join(modelDir, 'text_encoder'));
    return new PromptVocabulary(tokenizer, zeroRows, tokenizer.eosId);
  }

  /** For tests and callers with a tokenizer in hand: `unrepresented` token ids besides the unknown piece. */
  static of(tokenizer: ClipTokenizer, unrepresented: ReadonlySet<number>): PromptVocabulary {
    return new PromptVocabulary(tokenizer, unrepresented, tokenizer.eosId);
  }

  /**
   * The distinct words of `text` the model ignores, in prompt order, lower-cased, at most {@link MAX_IGNORED_WORDS}.
   * `text` is what the encoder reads: a weighted prompt's text pieces, without its brackets, weights and `BREAK`s.
   */
  ignoredWords(text: string): string[] {
    const seen = new Set<string>();
    const ignored: string[] = [];
    for (const match of text.matchAll(WORD)) {
      if (seen.size >= MAX_WORDS_CHECKED || ignored.length >= MAX_IGNORED_WORDS) break;
      const word = match[0].toLowerCase().slice(0, MAX_WORD_CHARS);
      if (seen.has(word)) continue;
      seen.add(word);
      const ids = this.tokenizer.tokenize(word);
      if (word !== EOS_TOKEN && ids.length > 0 && ids.every((id) => this.isUnrepresented(id)))
        ignored.push(word);
    }
    return ignored;
  }

  private isUnrepresented(id: number): boolean {
    return id === this.unknownId || this.unrepresented.has(id);
  }
}

/**
 * `Tiffin-Ignored-Words`: the words percent-encoded (RFC 3986), comma-separated, as many as fit in
 * {@link MAX_IGNORED_HEADER_BYTES}; undefined when there are none.
 */
export function ignoredWordsHeader(words: readonly string[]): string | undefined {
  let value = '';
  for (const word of words) {
    const next = value === '' ? encodeURIComponent(word) : `${value},${encodeURIComponent(word)}`;
    if (next.length > MAX_IGNORED_HEADER_BYTES) break;
    value = next;
  }
  return value === '' ? undefined : value;
}

/** Ids whose row of the token embedding table is all zero bytes (+0 in any float dtype); empty when there is no table. */
async function zeroEmbeddingRows(componentDir: string): Promise<Set<number>> {
  const zero = new Set<number>();
  if (!existsSync(componentDir)) return zero;
  let files: string[];
  try {
    files = componentWeightFiles(componentDir, 'model');
  } catch {
    return zero;
  }
  for (const path of files) {
    const file = SafetensorsFile.open(path);
    const entry = file.entries.get(TOKEN_EMBEDDING);
    file.close();
    if (entry?.shape.length !== 2) continue;
    const [rows, width] = entry.shape as [number, number];
    const rowBytes = (entry.end - entry.begin) / rows;
    if (!Number.isInteger(rowBytes) || rowBytes < width) return zero;
    const rowsPerRead = Math.max(1, Math.floor(SCAN_BYTES / rowBytes));
    const handle = await open(path, 'r');
    try {
      const buffer = Buffer.alloc(rowsPerRead * rowBytes);
      const zeroRow = Buffer.alloc(rowBytes);
      for (let first = 0; first < rows; first += rowsPerRead) {
        const count = Math.min(rowsPerRead, rows - first);
        await handle.read(buffer, 0, count * rowBytes, entry.begin + first * rowBytes);
        for (let r = 0; r < count; r++)
          if (zeroRow.compare(buffer, r * rowBytes, (r + 1) * rowBytes) === 0) zero.add(first + r);
      }
    } finally {
      await handle.close();
    }
    return zero;
  }
  return zero;
}
