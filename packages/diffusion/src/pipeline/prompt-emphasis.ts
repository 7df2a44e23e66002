import { InvalidArgument } from '@tiffin/core';
import type { HostTensor } from '../latents/host-tensor.js';

/**
 * AUTOMATIC1111's "Original" emphasis (docs/spec/diffusion.md §3.1) on a prompt's encoded chunks `[k, L, D]`: each
 * token's state times its weight, then each chunk scaled back to the mean it had before. The chunks side by side
 * are the prompt's embeddings `[1, k·L, D]`. A chunk whose weights are all 1 is left as it was (bit for bit); where
 * the restoring scale would not be finite (a weighted mean of 0) the chunk keeps the weighted states unscaled.
 */
export function emphasize(hidden: HostTensor, weights: readonly (readonly number[])[]): HostTensor {
  const [chunks, length, width] = hidden.shape;
  const out = new Float32Array(hidden.data);
  for (let c = 0; c < chunks; c++) {
    const w = weights[c];
    if (w.every((x) => x === 1)) continue;
    const chunk = out.subarray(c * length * width, (c + 1) * length * width);
    let before = 0;
    let after = 0;
    for (let t = 0; t < length; t++)
      for (let d = 0; d < width; d++) {
        const v = chunk[t * width + d];
        before += v;
        after += v * w[t];
      }
    const scale = before / after;
    const restore = Number.isFinite(scale) ? scale : 1;
    for (let t = 0; t < length; t++) {
      const by = w[t] * restore;
      for (let d = 0; d < width; d++) chunk[t * width + d] *= by;
    }
    // An overflow of the restoring scale falls back to the weighted states alone.
    if (!chunk.every(Number.isFinite))
      for (let t = 0; t < length; t++)
        for (let d = 0; d < width; d++)
          chunk[t * width + d] = hidden.data[c * length * width + t * width + d] * w[t];
  }
  return { data: out, shape: [1, chunks * length, width] };
}

/**
 * Embeddings `[B, S, D]` made `length` long with `empty` (`[1, L, D]`, the encoding of an empty chunk) repeated
 * after each row, as A1111 pads the shorter of a prompt and its negative (`pad_cond_uncond`).
 */
export function padWithEmpty(embeds: HostTensor, length: number, empty: HostTensor): HostTensor {
  const [rows, have, width] = embeds.shape;
  const chunk = empty.shape[1];
  if (have === length) return embeds;
  if (have > length || (length - have) % chunk !== 0)
    throw new InvalidArgument(
      `prompt embeddings of ${have} and ${length} tokens cannot be matched with chunks of ${chunk}`,
    );
  const out = new Float32Array(rows * length * width);
  for (let b = 0; b < rows; b++) {
    const at = b * length * width;
    out.set(embeds.data.subarray(b * have * width, (b + 1) * have * width), at);
    for (let s = have; s < length; s += chunk) out.set(empty.data, at + s * width);
  }
  return { data: out, shape: [rows, length, width] };
}

/** The longest sequence length of `embeds` (`[B, S, D]` each). */
export function longest(...embeds: HostTensor[]): number {
  return Math.max(...embeds.map((e) => e.shape[1]));
}
