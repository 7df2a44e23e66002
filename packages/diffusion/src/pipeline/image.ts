import { InvalidArgument } from '@tiffin/core';
import type { HostTensor } from '../latents/host-tensor.js';
import type { RgbImage } from './types.js';

/** Validate an RGB image and turn it into an NHWC float tensor in [-1, 1] (docs/spec/diffusion.md §8.2). */
export function imageToTensor(image: RgbImage): HostTensor {
  const { width, height, data } = image;
  if (!Number.isInteger(width) || !Number.isInteger(height) || width < 1 || height < 1)
    throw new InvalidArgument(`image size ${width}×${height} is invalid`);
  if (data.length !== width * height * 3)
    throw new InvalidArgument(
      `image data has ${data.length} values, expected ${width * height * 3} (RGB ${width}×${height})`,
    );
  if (width % 8 !== 0 || height % 8 !== 0)
    throw new InvalidArgument(`image size ${width}×${height} must be a multiple of 8 (resize it first)`);
  // Float32 arithmetic, one rounding per operation (as the TF.js ops this replaced).
  const factor = Math.fround(2 * (data instanceof Uint8Array ? 1 / 255 : 1));
  const out = Float32Array.from(data, (v) => Math.fround(Math.fround(v) * factor) - 1);
  return { data: out, shape: [1, height, width, 3] };
}

/** Decoder output NHWC (≈[-1, 1]) → per image uint8 RGB and float [0, 1] arrays. */
export function tensorToImages(decoded: HostTensor): { data: Uint8Array; float: Float32Array }[] {
  const [b, h, w] = decoded.shape;
  const f = Math.fround;
  const floats = decoded.data.map((v) => Math.min(Math.max(f(f(v / 2) + 0.5), 0), 1));
  const per = h * w * 3;
  const out: { data: Uint8Array; float: Float32Array }[] = [];
  for (let i = 0; i < b; i++) {
    const float = floats.slice(i * per, (i + 1) * per);
    const data = new Uint8Array(per);
    for (let j = 0; j < per; j++) data[j] = Math.round(float[j] * 255);
    out.push({ data, float });
  }
  return out;
}
