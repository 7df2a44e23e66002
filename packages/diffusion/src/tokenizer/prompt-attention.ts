/**
 * AUTOMATIC1111's prompt attention syntax (docs/spec/diffusion.md §3.1), read into pieces of text with a weight:
 * `(text)` multiplies the weight of what it encloses by 1.1, `[text]` divides it by 1.1, `(text:1.3)` multiplies it
 * by 1.3; brackets nest and multiply; `\(`, `\)`, `\[`, `\]` and `\\` are the literal characters; a bracket left open
 * at the end applies to the rest of the prompt, a closing one with nothing open is literal text; `BREAK` (a word of
 * its own) starts a new chunk of 75 tokens. Adjacent pieces of equal weight are joined.
 *
 * Where A1111 would fail or overflow, the reading stays bounded: a weight that is no number (`(a:1.2.3)`) leaves
 * its `:1.2.3` as text; brackets nested deeper than {@link MAX_BRACKET_DEPTH} still pair up but multiply no
 * further; every weight ends within ±{@link MAX_PROMPT_WEIGHT} (a product that is no number counts as 0).
 */

/** A run of prompt text and the weight its tokens' embeddings get, or a BREAK. */
export type PromptPiece = { kind: 'text'; text: string; weight: number } | { kind: 'break' };

/** A1111's multipliers of `(…)` and `[…]`. */
const ROUND_MULTIPLIER = 1.1;
const SQUARE_MULTIPLIER = 1 / 1.1;

/** Brackets of one kind open at once that still multiply; 1.1^256 is far past any weight that draws anything. */
export const MAX_BRACKET_DEPTH = 256;

/** The largest weight magnitude a piece keeps (float32 embeddings times it stay finite). */
export const MAX_PROMPT_WEIGHT = 1000;

/** Characters with a meaning of their own; plain text is the runs between them. */
const SPECIAL = new Set(['\\', '(', ')', '[', ']', ':']);
const ESCAPABLE = new Set(['(', ')', '[', ']', '\\']);

/** `:1.3)` at the reading position: A1111's weight syntax (signed digits and dots, then the closing bracket). */
const WEIGHT_AT = /:([+-]?[.\d]+)\)/y;

/** BREAK as a word of its own, with the white space around it (Python's `\bBREAK\b`, Unicode word characters). */
const BREAK_PATTERN = /\s*(?<![\p{L}\p{N}\p{M}_])BREAK(?![\p{L}\p{N}\p{M}_])\s*/u;

interface OpenBracket {
  /** Index of the first piece inside. */
  at: number;
  /** False past MAX_BRACKET_DEPTH: it pairs with its closing bracket but multiplies nothing. */
  live: boolean;
}

/** The pieces of `prompt`, in order (at least one). */
export function parsePromptAttention(prompt: string): PromptPiece[] {
  const pieces: PromptPiece[] = [];
  const round: OpenBracket[] = [];
  const square: OpenBracket[] = [];
  const text = (t: string) => pieces.push({ kind: 'text', text: t, weight: 1 });
  const open = (stack: OpenBracket[]) =>
    stack.push({ at: pieces.length, live: stack.length < MAX_BRACKET_DEPTH });
  // Every piece from the bracket's opening on, as A1111's multiply_range.
  const multiply = (bracket: OpenBracket, by: number) => {
    if (!bracket.live) return;
    for (let p = bracket.at; p < pieces.length; p++) {
      const piece = pieces[p];
      if (piece.kind === 'text') piece.weight *= by;
    }
  };
  let i = 0;
  while (i < prompt.length) {
    const c = prompt[i];
    if (c === '\\') {
      const next = prompt[i + 1];
      // A backslash before anything else is dropped, as A1111 does.
      if (next !== undefined && ESCAPABLE.has(next)) {
        text(next);
        i += 2;
      } else i += 1;
    } else if (c === '(') {
      open(round);
      i++;
    } else if (c === '[') {
      open(square);
      i++;
    } else if (c === ':') {
      WEIGHT_AT.lastIndex = i;
      const match = round.length > 0 ? WEIGHT_AT.exec(prompt) : null;
      const weight = match ? Number(match[1]) : Number.NaN;
      if (match && !Number.isNaN(weight)) {
        multiply(round.pop() as OpenBracket, weight);
        i += match[0].length;
      } else {
        text(':');
        i++;
      }
    } else if (c === ')' || c === ']') {
      const stack = c === ')' ? round : square;
      const bracket = stack.pop();
      if (bracket) multiply(bracket, c === ')' ? ROUND_MULTIPLIER : SQUARE_MULTIPLIER);
      else text(c);
      i++;
    } else {
      let end = i + 1;
      while (end < prompt.length && !SPECIAL.has(prompt[end])) end++;
      prompt
        .slice(i, end)
        .split(BREAK_PATTERN)
        .forEach((part, k) => {
          if (k > 0) pieces.push({ kind: 'break' });
          text(part);
        });
      i = end;
    }
  }
  for (const bracket of round) multiply(bracket, ROUND_MULTIPLIER);
  for (const bracket of square) multiply(bracket, SQUARE_MULTIPLIER);
  return joinEqualWeights(pieces.length > 0 ? pieces.map(bounded) : [{ kind: 'text', text: '', weight: 1 }]);
}

function bounded(piece: PromptPiece): PromptPiece {
  if (piece.kind === 'break') return piece;
  const w = Number.isNaN(piece.weight) ? 0 : piece.weight;
  return { ...piece, weight: Math.min(MAX_PROMPT_WEIGHT, Math.max(-MAX_PROMPT_WEIGHT, w)) };
}

/** Adjacent text pieces of the same weight as one (they tokenize together, as in A1111). */
function joinEqualWeights(pieces: PromptPiece[]): PromptPiece[] {
  const joined: PromptPiece[] = [];
  for (const piece of pieces) {
    const last = joined[joined.length - 1];
    if (piece.kind === 'text' && last?.kind === 'text' && last.weight === piece.weight)
      last.text += piece.text;
    else joined.push({ ...piece });
  }
  return joined;
}
