import type { Context, Logger } from '@tiffin/core';
import { ignoredWordsHeader, PromptVocabulary } from '../tokenizer/ignored-words.js';
import { parsePromptAttention } from '../tokenizer/prompt-attention.js';

/** The response header naming the prompt's ignored words (percent-encoded, comma-separated, at most 1 KiB). */
export const IGNORED_WORDS_HEADER = 'tiffin-ignored-words';

/** The fields of a request the report reads. */
interface PromptParams {
  prompt?: string | null;
  prompt_weighting?: boolean;
}

/**
 * Tells a client which words of its prompt the model ignores (docs/spec/diffusion.md §3): the answer's
 * `Tiffin-Ignored-Words` header, and `ignored_words` in its task's step events. The vocabulary is read once at
 * start; a folder it cannot read (a single-file checkpoint) reports nothing.
 */
export class IgnoredWordsReport {
  private vocabulary: PromptVocabulary | null = null;

  constructor(private readonly modelDir: string) {}

  async load(logger: Logger): Promise<void> {
    try {
      this.vocabulary = await PromptVocabulary.fromModelFolder(this.modelDir);
    } catch (err) {
      logger.log('warn', 'prompt vocabulary not read: ignored words are not reported', {
        error: (err as Error).message,
      });
    }
  }

  /**
   * The prompt's ignored words. With prompt weighting (the default) the words are those of its text, not its
   * brackets, weights and `BREAK`s.
   */
  words(params: PromptParams): string[] {
    const { prompt } = params;
    if (!prompt || !this.vocabulary) return [];
    const text =
      params.prompt_weighting === false
        ? prompt
        : parsePromptAttention(prompt)
            .flatMap((piece) => (piece.kind === 'text' ? [piece.text] : []))
            .join(' ');
    return this.vocabulary.ignoredWords(text);
  }

  /** The prompt's ignored words (`words`), also set as the response header of `ctx` when there are some. */
  report(params: PromptParams, ctx: Context): string[] {
    const words = this.words(params);
    const header = ignoredWordsHeader(words);
    if (header !== undefined) ctx.response.headers.set(IGNORED_WORDS_HEADER, header);
    return words;
  }
}
