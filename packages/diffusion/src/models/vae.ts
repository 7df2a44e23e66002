import * as tf from '@tensorflow/tfjs';
import type { WeightSpec, WeightStore } from '../weights/store.js';
import {
  convSpecs,
  downsample,
  type NormOptions,
  normSpecs,
  resnet,
  resnetSpecs,
  upsample,
  vaeAttention,
  vaeAttentionSpecs,
} from './blocks.js';
import { conv2d, groupNorm, silu } from './layers.js';

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

/** Old diffusers VAE attention names → current ones (renamed on load). */
export const VAE_LEGACY_NAMES: Readonly<Record<string, string>> = {
  query: 'to_q',
  key: 'to_k',
  value: 'to_v',
  proj_attn: 'to_out.0',
};

function midSpecs(p: string, c: number): WeightSpec[] {
  return [
    ...resnetSpecs(`${p}.resnets.0`, c, c, null),
    ...vaeAttentionSpecs(`${p}.attentions.0`, c),
    ...resnetSpecs(`${p}.resnets.1`, c, c, null),
  ];
}

export function vaeWeightSpecs(c: VaeConfig): WeightSpec[] {
  const C = c.block_out_channels;
  const N = C.length;
  const L = c.latent_channels;
  const s: WeightSpec[] = [...convSpecs('encoder.conv_in', c.in_channels, C[0], 3)];
  for (let i = 0; i < N; i++) {
    for (let j = 0; j < c.layers_per_block; j++) {
      s.push(
        ...resnetSpecs(
          `encoder.down_blocks.${i}.resnets.${j}`,
          j === 0 ? C[Math.max(i - 1, 0)] : C[i],
          C[i],
          null,
        ),
      );
    }
    if (i < N - 1) s.push(...convSpecs(`encoder.down_blocks.${i}.downsamplers.0.conv`, C[i], C[i], 3));
  }
  s.push(...midSpecs('encoder.mid_block', C[N - 1]));
  s.push(
    ...normSpecs('encoder.conv_norm_out', C[N - 1]),
    ...convSpecs('encoder.conv_out', C[N - 1], 2 * L, 3),
  );
  s.push(...convSpecs('quant_conv', 2 * L, 2 * L, 1), ...convSpecs('post_quant_conv', L, L, 1));
  const R = [...C].reverse();
  s.push(...convSpecs('decoder.conv_in', L, R[0], 3), ...midSpecs('decoder.mid_block', R[0]));
  for (let i = 0; i < N; i++) {
    for (let j = 0; j <= c.layers_per_block; j++) {
      s.push(
        ...resnetSpecs(
          `decoder.up_blocks.${i}.resnets.${j}`,
          j === 0 ? R[Math.max(i - 1, 0)] : R[i],
          R[i],
          null,
        ),
      );
    }
    if (i < N - 1) s.push(...convSpecs(`decoder.up_blocks.${i}.upsamplers.0.conv`, R[i], R[i], 3));
  }
  s.push(
    ...normSpecs('decoder.conv_norm_out', C[0]),
    ...convSpecs('decoder.conv_out', C[0], c.out_channels, 3),
  );
  return s;
}

export interface LatentDistribution {
  /** NHWC [B, h, w, latent_channels]. */
  mean: tf.Tensor4D;
  std: tf.Tensor4D;
}

/** AutoencoderKL encoder and decoder in NHWC. */
export class AutoencoderKL {
  private readonly norm: NormOptions;

  constructor(
    readonly config: VaeConfig,
    readonly weights: WeightStore,
  ) {
    this.norm = { groups: config.norm_num_groups, eps: 1e-6 };
  }

  get scaleFactor(): number {
    return 2 ** (this.config.block_out_channels.length - 1);
  }

  private mid(p: string, h: tf.Tensor): tf.Tensor {
    const w = (n: string) => this.weights.get(n);
    h = resnet(w, `${p}.resnets.0`, h, null, this.norm);
    h = vaeAttention(w, `${p}.attentions.0`, h, this.norm.groups);
    return resnet(w, `${p}.resnets.1`, h, null, this.norm);
  }

  /** Raw decoder output (no scaling) for latents NHWC → image NHWC roughly in [-1, 1]. */
  decode(z: tf.Tensor4D): tf.Tensor4D {
    const w = (n: string) => this.weights.get(n);
    const N = this.config.block_out_channels.length;
    return tf.tidy(() => {
      let h: tf.Tensor = conv2d(z, w('post_quant_conv.weight'), w('post_quant_conv.bias'));
      h = conv2d(h, w('decoder.conv_in.weight'), w('decoder.conv_in.bias'));
      h = this.mid('decoder.mid_block', h);
      for (let i = 0; i < N; i++) {
        for (let j = 0; j <= this.config.layers_per_block; j++)
          h = resnet(w, `decoder.up_blocks.${i}.resnets.${j}`, h, null, this.norm);
        if (i < N - 1) h = upsample(w, `decoder.up_blocks.${i}.upsamplers.0`, h);
      }
      h = silu(
        groupNorm(
          h,
          this.norm.groups,
          1e-6,
          w('decoder.conv_norm_out.weight'),
          w('decoder.conv_norm_out.bias'),
        ),
      );
      return conv2d(h, w('decoder.conv_out.weight'), w('decoder.conv_out.bias')) as tf.Tensor4D;
    });
  }

  /** Image NHWC in [-1, 1] → latent distribution (mean, std). */
  encode(x: tf.Tensor4D): LatentDistribution {
    const w = (n: string) => this.weights.get(n);
    const N = this.config.block_out_channels.length;
    const L = this.config.latent_channels;
    const [mean, std] = tf.tidy(() => {
      let h: tf.Tensor = conv2d(x, w('encoder.conv_in.weight'), w('encoder.conv_in.bias'));
      for (let i = 0; i < N; i++) {
        for (let j = 0; j < this.config.layers_per_block; j++)
          h = resnet(w, `encoder.down_blocks.${i}.resnets.${j}`, h, null, this.norm);
        if (i < N - 1) h = downsample(w, `encoder.down_blocks.${i}.downsamplers.0`, h, 'right-bottom');
      }
      h = this.mid('encoder.mid_block', h);
      h = silu(
        groupNorm(
          h,
          this.norm.groups,
          1e-6,
          w('encoder.conv_norm_out.weight'),
          w('encoder.conv_norm_out.bias'),
        ),
      );
      h = conv2d(h, w('encoder.conv_out.weight'), w('encoder.conv_out.bias'));
      const moments = conv2d(h, w('quant_conv.weight'), w('quant_conv.bias'));
      const [m, logvar] = tf.split(moments, [L, L], 3);
      return [m as tf.Tensor4D, tf.exp(tf.mul(tf.clipByValue(logvar, -30, 20), 0.5)) as tf.Tensor4D];
    });
    return { mean, std };
  }

  dispose(): void {
    this.weights.dispose();
  }
}
