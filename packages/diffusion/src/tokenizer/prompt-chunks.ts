import type { ClipTokenizer } from './clip-tokenizer.js';
import { parsePromptAttention } from './prompt-attention.js';

/**
 * A prompt as the text encoder reads it (docs/spec/diffusion.md §3.1): one row of `tokenizer.maxLength` ids per
 * chunk, each `[bos, up to maxLength − 2 tokens, eos, padding]`, and each token's attention weight in the same layout
 * (1 for bos, eos and padding).
 */
export interface PromptChunks {
  ids: number[][];
  weights: number[][];
  /** Whether tokens were dropped: past one chunk without weighting, past {@link MAX_PROMPT_CHUNKS} with it. */
  truncated: boolean;
}

/**
 * The most chunks a prompt is read in (600 tokens). Each chunk is one more text-encoder row and 77 more keys for
 * every cross-attention of every step; a prompt past this is cut there.
 */
export const MAX_PROMPT_CHUNKS = 8;

/** How far back from a chunk's end a comma may pull the rest of its phrase into the next chunk (A1111's 20). */
const COMMA_BACKTRACK = 20;

/**
 * The chunks of `prompt`. With `weighting`, AUTOMATIC1111's reading: the attention syntax parsed
 * (`parsePromptAttention`), each piece tokenized, the tokens cut into chunks of maxLength − 2 — at a BREAK, and
 * where a comma lies within the last 20 tokens of a full chunk, after that comma — at most MAX_PROMPT_CHUNKS.
 * Without it, diffusers' reading: the text as it is, in one chunk, cut after maxLength − 2 tokens.
 */
export function promptChunks(tokenizer: ClipTokenizer, prompt: string, weighting: boolean): PromptChunks {
  const size = tokenizer.maxLength - 2;
  if (!weighting) {
    const tokens = tokenizer.tokenize(prompt);
    return {
      ids: [tokenizer.layout(tokens)],
      weights: [new Array<number>(tokenizer.maxLength).fill(1)],
      truncated: tokens.length > size,
    };
  }
  const chunks: Array<{ tokens: number[]; weights: number[] }> = [];
  let current = { tokens: [] as number[], weights: [] as number[] };
  let lastComma = -1;
  let truncated = false;
  const nextChunk = () => {
    if (chunks.length < MAX_PROMPT_CHUNKS) chunks.push(current);
    else if (current.tokens.length > 0) truncated = true;
    current = { tokens: [], weights: [] };
    lastComma = -1;
  };
  for (const piece of parsePromptAttention(prompt)) {
    if (truncated) break;
    if (piece.kind === 'break') {
      nextChunk();
      continue;
    }
    for (const token of tokenizer.tokenize(piece.text)) {
      if (token === tokenizer.commaId) lastComma = current.tokens.length;
      else if (current.tokens.length === size && lastComma !== -1 && size - lastComma <= COMMA_BACKTRACK) {
        const moved = {
          tokens: current.tokens.splice(lastComma + 1),
          weights: current.weights.splice(lastComma + 1),
        };
        nextChunk();
        current = moved;
      }
      if (current.tokens.length === size) nextChunk();
      if (truncated) break;
      current.tokens.push(token);
      current.weights.push(piece.weight);
    }
  }
  if (current.tokens.length > 0 || chunks.length === 0) nextChunk();
  return {
    ids: chunks.map((c) => tokenizer.layout(c.tokens)),
    weights: chunks.map((c) => [1, ...c.weights, ...new Array<number>(size + 1 - c.weights.length).fill(1)]),
    truncated,
  };
}
