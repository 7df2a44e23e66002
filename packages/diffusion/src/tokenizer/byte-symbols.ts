/** CLIP's byte → printable-symbol table and vocabulary byte order (docs/spec/diffusion.md §3), for laying out vocabularies. */

function build(): { byteToSymbol: string[]; order: number[] } {
  const printable: number[] = [];
  for (let b = 33; b <= 126; b++) printable.push(b);
  for (let b = 161; b <= 172; b++) printable.push(b);
  for (let b = 174; b <= 255; b++) printable.push(b);
  const byteToSymbol: string[] = new Array(256);
  for (const b of printable) byteToSymbol[b] = String.fromCodePoint(b);
  let next = 0;
  const remapped: number[] = [];
  for (let b = 0; b < 256; b++) {
    if (byteToSymbol[b] === undefined) {
      byteToSymbol[b] = String.fromCodePoint(256 + next++);
      remapped.push(b);
    }
  }
  return { byteToSymbol, order: [...printable, ...remapped] };
}

const table = build();
export const BYTE_TO_SYMBOL: readonly string[] = table.byteToSymbol;
/** Bytes in vocabulary order: ids 0–255 are BYTE_TO_SYMBOL[BYTE_ORDER[i]]. */
export const BYTE_ORDER: readonly number[] = table.order;

/**
 * The CLIP vocabulary a merges list implies (docs/spec/diffusion.md §3): the 256 byte symbols, the same with `</w>`,
 * one entry per merge in merge order, then `<|startoftext|>` and `<|endoftext|>`.
 */
export function clipVocabFromMerges(merges: readonly string[]): Record<string, number> {
  const vocab: Record<string, number> = {};
  let id = 0;
  for (const b of BYTE_ORDER) vocab[BYTE_TO_SYMBOL[b]!] = id++;
  for (const b of BYTE_ORDER) vocab[`${BYTE_TO_SYMBOL[b]}</w>`] = id++;
  for (const m of merges) vocab[m.replace(' ', '')] = id++;
  vocab['<|startoftext|>'] = id++;
  vocab['<|endoftext|>'] = id++;
  return vocab;
}
