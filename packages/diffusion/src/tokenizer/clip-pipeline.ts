/**
 * The CLIP tokenizer pipeline (docs/spec/diffusion.md §3) written as a Hugging Face `tokenizer.json` description, so that
 * @huggingface/tokenizers runs it. Diffusers folders ship only vocab.json + merges.txt, so the pipeline
 * is built here from those, in the layout of the CLIP fast tokenizer: NFC, whitespace runs → one space,
 * lower-case; keep the CLIP regex matches (whitespace dropped); byte-level symbols; BPE with `</w>` on
 * the last symbol of a word and unknown pieces → `<|endoftext|>`.
 */

export const BOS_TOKEN = '<|startoftext|>';
export const EOS_TOKEN = '<|endoftext|>';

/** CLIP's word pattern without the special-token alternatives (those are added tokens below). */
const CLIP_WORD_PATTERN = "'s|'t|'re|'ve|'m|'ll|'d|[\\p{L}]+|[\\p{N}]|[^\\s\\p{L}\\p{N}]+";

export interface ClipPipelineDescription {
  version: string;
  added_tokens: {
    id: number;
    content: string;
    single_word: boolean;
    lstrip: boolean;
    rstrip: boolean;
    normalized: boolean;
    special: boolean;
  }[];
  normalizer: Record<string, unknown>;
  pre_tokenizer: Record<string, unknown>;
  post_processor: null;
  decoder: Record<string, unknown>;
  model: {
    type: 'BPE';
    dropout: null;
    unk_token: string;
    continuing_subword_prefix: string;
    end_of_word_suffix: string;
    fuse_unk: boolean;
    byte_fallback: boolean;
    vocab: Readonly<Record<string, number>>;
    merges: readonly string[];
  };
}

export function clipPipelineDescription(
  vocab: Readonly<Record<string, number>>,
  merges: readonly string[],
  specialIds: { bos: number; eos: number },
): ClipPipelineDescription {
  // normalized: true — the literal special tokens are matched after lower-casing, as CLIP's regex does.
  const special = (id: number, content: string) => ({
    id,
    content,
    single_word: false,
    lstrip: false,
    rstrip: false,
    normalized: true,
    special: true,
  });
  return {
    version: '1.0',
    added_tokens: [special(specialIds.bos, BOS_TOKEN), special(specialIds.eos, EOS_TOKEN)],
    normalizer: {
      type: 'Sequence',
      normalizers: [
        { type: 'NFC' },
        { type: 'Replace', pattern: { Regex: '\\s+' }, content: ' ' },
        { type: 'Lowercase' },
      ],
    },
    pre_tokenizer: {
      type: 'Sequence',
      pretokenizers: [
        { type: 'Split', pattern: { Regex: CLIP_WORD_PATTERN }, behavior: 'Removed', invert: true },
        { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: false },
      ],
    },
    // BOS/EOS, truncation and padding are ClipTokenizer's job (SD prompt layout, docs/spec/diffusion.md §3 step 5).
    post_processor: null,
    decoder: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true },
    model: {
      type: 'BPE',
      dropout: null,
      unk_token: EOS_TOKEN,
      continuing_subword_prefix: '',
      end_of_word_suffix: '</w>',
      fuse_unk: false,
      byte_fallback: false,
      vocab,
      merges,
    },
  };
}
