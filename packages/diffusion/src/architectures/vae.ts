import { DeclareOps } from '../ops/declare-ops.js';
import type { Ops } from '../ops/ops.js';
import type { WeightSpec } from '../weights/weight-spec.js';
import { type NormOptions, resnet, upsample, vaeAttention } from './blocks.js';

/** diffusers AutoencoderKL config fields used here (docs/spec/diffusion.md §6). */
export interface VaeConfig {
  in_channels: number;
  out_channels: number;
  block_out_channels: number[];
  layers_per_block: number;
  latent_channels: number;
  norm_num_groups: number;
  scaling_factor: number;
  down_block_types?: string[];
  up_block_types?: string[];
  sample_size?: number;
}

const norm = (c: VaeConfig): NormOptions => ({ groups: c.norm_num_groups, eps: 1e-6 });

function mid<T>(o: Ops<T>, c: VaeConfig, p: string, h: T, channels: number): T {
  const n = norm(c);
  h = resnet(o, `${p}.resnets.0`, h, null, n, channels, channels);
  h = vaeAttention(o, `${p}.attentions.0`, h, channels, n.groups);
  return resnet(o, `${p}.resnets.1`, h, null, n, channels, channels);
}

/** AutoencoderKL decode (docs/spec/diffusion.md §6): latents (already divided by scaling_factor) → raw image. */
export function vaeDecode<T>(o: Ops<T>, c: VaeConfig, z: T): T {
  const C = c.block_out_channels;
  const R = [...C].reverse();
  const N = C.length;
  const n = norm(c);
  let h = o.conv2d(z, 'post_quant_conv', c.latent_channels, 1);
  h = o.conv2d(h, 'decoder.conv_in', R[0], 3);
  h = mid(o, c, 'decoder.mid_block', h, C[N - 1]);
  for (let i = 0; i < N; i++) {
    for (let j = 0; j <= c.layers_per_block; j++) {
      const cin = j === 0 ? R[Math.max(i - 1, 0)] : R[i];
      const x = h;
      h = o.block(() => resnet(o, `decoder.up_blocks.${i}.resnets.${j}`, x, null, n, cin, R[i]));
    }
    if (i < N - 1) h = upsample(o, `decoder.up_blocks.${i}.upsamplers.0`, h, R[i]);
  }
  h = o.silu(o.groupNorm(h, 'decoder.conv_norm_out', n.groups, 1e-6));
  return o.conv2d(h, 'decoder.conv_out', c.out_channels, 3);
}

/** AutoencoderKL encode (docs/spec/diffusion.md §6): image in [-1, 1] → latent mean and std. */
export function vaeEncode<T>(o: Ops<T>, c: VaeConfig, x: T): { mean: T; std: T } {
  const C = c.block_out_channels;
  const N = C.length;
  const L = c.latent_channels;
  const n = norm(c);
  let h = o.conv2d(x, 'encoder.conv_in', C[0], 3);
  for (let i = 0; i < N; i++) {
    for (let j = 0; j < c.layers_per_block; j++) {
      const cin = j === 0 ? C[Math.max(i - 1, 0)] : C[i];
      const r = h;
      h = o.block(() => resnet(o, `encoder.down_blocks.${i}.resnets.${j}`, r, null, n, cin, C[i]));
    }
    // Zero padding on the right and bottom only, then a stride-2 conv (diffusers' VAE downsampler).
    if (i < N - 1)
      h = o.conv2d(h, `encoder.down_blocks.${i}.downsamplers.0.conv`, C[i], 3, 2, 'bottom-right');
  }
  h = mid(o, c, 'encoder.mid_block', h, C[N - 1]);
  h = o.conv2d(o.silu(o.groupNorm(h, 'encoder.conv_norm_out', n.groups, 1e-6)), 'encoder.conv_out', 2 * L, 3);
  const moments = o.conv2d(h, 'quant_conv', 2 * L, 1);
  const [mean, logvar] = o.splitChannels(moments, [L, L]);
  return { mean, std: o.exp(o.scale(o.clip(logvar, -30, 20), 0.5)) };
}

/** The weights the VAE reads (diffusers names, torch shapes), from its encoder and decoder definitions. */
export function vaeWeightSpecs(c: VaeConfig): WeightSpec[] {
  const o = new DeclareOps();
  const size = 2 ** c.block_out_channels.length;
  vaeEncode(o, c, [1, c.in_channels, size, size]);
  vaeDecode(o, c, [1, c.latent_channels, 1, 1]);
  return o.specs();
}
