import { type AnyTensor, asHost } from '../latents/tfjs-interop.js';
import type { PipelineFamily } from './parameters.js';

/**
 * Linear approximations of each family's VAE decoder on its 4 latent channels (rows: latent channel, columns: R, G,
 * B; plus a bias): a blurry 1/8-size colour preview in microseconds instead of a decode. SD 1.x/2.x: the widely used
 * table; SDXL's latents live in another space, so it has its own (ComfyUI's `latent_formats.SDXL` factors and bias).
 */
const LATENT_RGB: Readonly<Record<PipelineFamily, { factors: number[][]; bias: number[] }>> = {
  sd: {
    factors: [
      [0.298, 0.207, 0.208],
      [0.187, 0.286, 0.173],
      [-0.158, 0.189, 0.264],
      [-0.184, -0.271, -0.473],
    ],
    bias: [0, 0, 0],
  },
  sdxl: {
    factors: [
      [0.3651, 0.4232, 0.4341],
      [-0.2533, -0.0042, 0.1068],
      [0.1076, 0.1111, -0.0362],
      [-0.3165, -0.2492, -0.2188],
    ],
    bias: [0.1084, -0.0175, -0.0011],
  },
};

/**
 * A low-resolution RGB preview (latent size, uint8 HWC) of the first image of NHWC latents, by the family's linear
 * approximation above (other channel counts: the channel mean as grey).
 */
export function latentPreview(
  latents: AnyTensor,
  family: PipelineFamily = 'sd',
): { width: number; height: number; data: Uint8Array } {
  const { data, shape } = asHost(latents);
  const [, height, width, channels] = shape;
  const { factors, bias } = LATENT_RGB[family];
  const f = Math.fround;
  const out = new Uint8Array(height * width * 3);
  for (let p = 0; p < height * width; p++) {
    const px = data.subarray(p * channels, (p + 1) * channels);
    for (let c = 0; c < 3; c++) {
      let v: number;
      if (channels === factors.length) {
        v = 0;
        for (let k = 0; k < channels; k++) v = f(v + f(px[k] * f(factors[k][c])));
        v = f(v + f(bias[c]));
      } else {
        let sum = 0;
        for (let k = 0; k < channels; k++) sum = f(sum + px[k]);
        v = f(sum / channels);
      }
      out[p * 3 + c] = Math.round(Math.min(Math.max(f(f(v + 1) * 127.5), 0), 255));
    }
  }
  return { width, height, data: out };
}
