import { describe, expect, it } from 'vitest';
import { resizeLatents } from '../src/latents/resize-latents.js';

/**
 * A1111's latent upscalers are `torch.nn.functional.interpolate` with a target size: "Latent" bilinear with
 * `align_corners=False` (no antialias), "Latent (nearest)" nearest. The expected values are PyTorch's for the
 * 2×2 map [[1, 2], [3, 4]] (one channel) upscaled to 4×4 and down to 1×1.
 */
const map = { data: Float32Array.from([1, 2, 3, 4]), shape: [1, 2, 2, 1] };

describe('resizeLatents', () => {
  it('is PyTorch bilinear (align_corners=False) for "Latent"', () => {
    expect(Array.from(resizeLatents(map, 4, 4, 'bilinear').data)).toEqual([
      1, 1.25, 1.75, 2, 1.5, 1.75, 2.25, 2.5, 2.5, 2.75, 3.25, 3.5, 3, 3.25, 3.75, 4,
    ]);
    // Down to one pixel: the centre, (0.5, 0.5) → 2.5.
    expect(Array.from(resizeLatents(map, 1, 1, 'bilinear').data)).toEqual([2.5]);
  });

  it('is PyTorch nearest for "Latent (nearest)", channel by channel in NHWC', () => {
    const two = { data: Float32Array.from([1, -1, 2, -2, 3, -3, 4, -4]), shape: [1, 2, 2, 2] };
    const out = resizeLatents(two, 4, 4, 'nearest');
    expect(out.shape).toEqual([1, 4, 4, 2]);
    const first = Array.from(out.data).filter((_, i) => i % 2 === 0);
    expect(first).toEqual([1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4]);
    expect(Array.from(out.data).filter((_, i) => i % 2 === 1)).toEqual(first.map((v) => -v));
  });
});
