import { DataType } from '@tiffin/onnx';
import { type VaeConfig, vaeDecode, vaeEncode } from '../../architectures/vae.js';
import type { GraphBuilder } from './graph-builder.js';
import { type AttentionOptions, OnnxOps } from './onnx-ops.js';

export const VAE_DECODER_IO = { input: 'latents', output: 'image' } as const;
export const VAE_ENCODER_IO = { input: 'image', mean: 'mean', std: 'std' } as const;

/** The VAE decoder (`architectures/vae.ts`) as a graph: NHWC latents (already divided by scaling_factor) → NHWC image. */
export function buildVaeDecoderGraph(g: GraphBuilder, c: VaeConfig, opts: AttentionOptions): void {
  const o = new OnnxOps(g, opts.kind);
  const z = g.input(VAE_DECODER_IO.input, DataType.FLOAT, ['batch', 'height', 'width', c.latent_channels]);
  const image = vaeDecode(o, c, o.fromNhwc(z));
  g.output(o.toNhwc(image), VAE_DECODER_IO.output, DataType.FLOAT, [
    'batch',
    'out_height',
    'out_width',
    c.out_channels,
  ]);
}

/** The VAE encoder as a graph: NHWC image in [-1, 1] → latent mean and std (NHWC). */
export function buildVaeEncoderGraph(g: GraphBuilder, c: VaeConfig, opts: AttentionOptions): void {
  const o = new OnnxOps(g, opts.kind);
  const x = g.input(VAE_ENCODER_IO.input, DataType.FLOAT, ['batch', 'height', 'width', c.in_channels]);
  const { mean, std } = vaeEncode(o, c, o.fromNhwc(x));
  const shape = ['batch', 'latent_height', 'latent_width', c.latent_channels];
  g.output(o.toNhwc(mean), VAE_ENCODER_IO.mean, DataType.FLOAT, shape);
  g.output(o.toNhwc(std), VAE_ENCODER_IO.std, DataType.FLOAT, shape);
}
