import type { HostTensor } from './host-tensor.js';

/** How latents are resized: PyTorch's `interpolate` modes A1111's latent upscalers use. */
export type LatentResizeMode = 'bilinear' | 'nearest';

/**
 * Source coordinate of output index `i` along an axis of `inSize` → `outSize`: PyTorch's `interpolate` with a
 * given size and `align_corners=False` (bilinear: pixel centres, clamped at 0; nearest: `floor(i × in / out)`).
 */
function sourceOf(i: number, inSize: number, outSize: number, mode: LatentResizeMode): number {
  const scale = inSize / outSize;
  if (mode === 'nearest') return Math.min(Math.floor(i * scale), inSize - 1);
  return Math.max((i + 0.5) * scale - 0.5, 0);
}

/**
 * NHWC latents resized to `height` × `width` as A1111's hires fix "Latent" (bilinear, no antialias) and
 * "Latent (nearest)" upscalers do it (`torch.nn.functional.interpolate`), in float32.
 */
export function resizeLatents(
  x: HostTensor,
  height: number,
  width: number,
  mode: LatentResizeMode,
): HostTensor {
  const [batch, inH, inW, channels] = x.shape;
  const out = new Float32Array(batch * height * width * channels);
  const rows = Array.from({ length: height }, (_, i) => sourceOf(i, inH, height, mode));
  const cols = Array.from({ length: width }, (_, i) => sourceOf(i, inW, width, mode));
  const f = Math.fround;
  let o = 0;
  for (let b = 0; b < batch; b++) {
    const base = b * inH * inW * channels;
    for (let i = 0; i < height; i++) {
      const y0 = Math.floor(rows[i]);
      const y1 = Math.min(y0 + 1, inH - 1);
      const ly = f(rows[i] - y0);
      for (let j = 0; j < width; j++) {
        const x0 = Math.floor(cols[j]);
        const x1 = Math.min(x0 + 1, inW - 1);
        const lx = f(cols[j] - x0);
        const p00 = base + (y0 * inW + x0) * channels;
        const p01 = base + (y0 * inW + x1) * channels;
        const p10 = base + (y1 * inW + x0) * channels;
        const p11 = base + (y1 * inW + x1) * channels;
        for (let c = 0; c < channels; c++) {
          if (mode === 'nearest') {
            out[o++] = x.data[p00 + c];
            continue;
          }
          const top = f(f((1 - lx) * x.data[p00 + c]) + f(lx * x.data[p01 + c]));
          const bottom = f(f((1 - lx) * x.data[p10 + c]) + f(lx * x.data[p11 + c]));
          out[o++] = f(f((1 - ly) * top) + f(ly * bottom));
        }
      }
    }
  }
  return { data: out, shape: [batch, height, width, channels] };
}
