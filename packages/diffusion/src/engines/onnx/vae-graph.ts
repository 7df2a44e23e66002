import type { VaeConfig } from '../../models/vae.js';
import type { GraphBuilder } from './graph-builder.js';
import { DataType } from './onnx-proto.js';
import {
  type AttentionOptions,
  conv,
  fromNhwc,
  groupNorm,
  type NormOptions,
  resnet,
  silu,
  toNhwc,
  upsample,
  vaeAttention,
} from './ops.js';

export const VAE_DECODER_IO = { input: 'latents', output: 'image' } as const;
export const VAE_ENCODER_IO = { input: 'image', mean: 'mean', std: 'std' } as const;

function mid(
  g: GraphBuilder,
  p: string,
  h: string,
  c: number,
  n: NormOptions,
  opts: AttentionOptions,
): string {
  h = resnet(g, `${p}.resnets.0`, h, null, n);
  h = vaeAttention(g, `${p}.attentions.0`, h, c, n.groups, opts);
  return resnet(g, `${p}.resnets.1`, h, null, n);
}

/** AutoencoderKL decode (docs/spec/diffusion.md §6): NHWC latents (already divided by scaling_factor) → NHWC image. */
export function buildVaeDecoderGraph(g: GraphBuilder, c: VaeConfig, opts: AttentionOptions): void {
  const C = c.block_out_channels;
  const N = C.length;
  const n: NormOptions = { groups: c.norm_num_groups, eps: 1e-6 };
  const z = g.input(VAE_DECODER_IO.input, DataType.FLOAT, ['batch', 'height', 'width', c.latent_channels]);
  let h = conv(g, fromNhwc(g, z), 'post_quant_conv', 1);
  h = conv(g, h, 'decoder.conv_in', 3);
  h = mid(g, 'decoder.mid_block', h, C[N - 1], n, opts);
  for (let i = 0; i < N; i++) {
    for (let j = 0; j <= c.layers_per_block; j++)
      h = resnet(g, `decoder.up_blocks.${i}.resnets.${j}`, h, null, n);
    if (i < N - 1) h = upsample(g, `decoder.up_blocks.${i}.upsamplers.0`, h);
  }
  h = conv(g, silu(g, groupNorm(g, h, 'decoder.conv_norm_out', n.groups, 1e-6)), 'decoder.conv_out', 3);
  g.output(toNhwc(g, h), VAE_DECODER_IO.output, DataType.FLOAT, [
    'batch',
    'out_height',
    'out_width',
    c.out_channels,
  ]);
}

/** AutoencoderKL encode (docs/spec/diffusion.md §6): NHWC image in [-1, 1] → latent mean and std (NHWC). */
export function buildVaeEncoderGraph(g: GraphBuilder, c: VaeConfig, opts: AttentionOptions): void {
  const C = c.block_out_channels;
  const N = C.length;
  const L = c.latent_channels;
  const n: NormOptions = { groups: c.norm_num_groups, eps: 1e-6 };
  const x = g.input(VAE_ENCODER_IO.input, DataType.FLOAT, ['batch', 'height', 'width', c.in_channels]);
  let h = conv(g, fromNhwc(g, x), 'encoder.conv_in', 3);
  for (let i = 0; i < N; i++) {
    for (let j = 0; j < c.layers_per_block; j++)
      h = resnet(g, `encoder.down_blocks.${i}.resnets.${j}`, h, null, n);
    // Zero padding on the right and bottom only, then a stride-2 conv (diffusers' VAE downsampler).
    if (i < N - 1) h = conv(g, h, `encoder.down_blocks.${i}.downsamplers.0.conv`, 3, 2, [0, 0, 1, 1]);
  }
  h = mid(g, 'encoder.mid_block', h, C[N - 1], n, opts);
  h = conv(g, silu(g, groupNorm(g, h, 'encoder.conv_norm_out', n.groups, 1e-6)), 'encoder.conv_out', 3);
  const moments = conv(g, h, 'quant_conv', 1);
  const [mean, logvar] = g.nodeN('Split', [moments, g.ints([L, L])], 2, { axis: { kind: 'int', value: 1 } });
  const clipped = g.node('Clip', [logvar, g.scalar(-30), g.scalar(20)]);
  const std = g.node('Exp', [g.node('Mul', [clipped, g.scalar(0.5)])]);
  const shape = ['batch', 'latent_height', 'latent_width', L];
  g.output(toNhwc(g, mean), VAE_ENCODER_IO.mean, DataType.FLOAT, shape);
  g.output(toNhwc(g, std), VAE_ENCODER_IO.std, DataType.FLOAT, shape);
}
