import { clipVocabFromMerges } from '../tokenizer/byte-symbols.js';

const TINY_WORDS = 'photo of an astronaut riding horse on mars cat dog bento box the painting pixel art lora';

/** The spec-11.2 tiny vocabulary (569 entries) and merges (55). */
export function tinyTokenizerFiles(): { vocab: Record<string, number>; merges: string[] } {
  const merges: string[] = [];
  const seen = new Set<string>();
  for (const word of TINY_WORDS.split(' ')) {
    const chars = [...word].map((c, i, a) => (i === a.length - 1 ? `${c}</w>` : c));
    let left = chars[0];
    for (let i = 1; i < chars.length; i++) {
      const pair = `${left} ${chars[i]}`;
      if (!seen.has(pair)) {
        seen.add(pair);
        merges.push(pair);
      }
      left += chars[i];
    }
  }
  const vocab = clipVocabFromMerges(merges);
  return { vocab, merges };
}
