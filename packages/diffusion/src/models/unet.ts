import * as tf from '@tensorflow/tfjs';
import type { WeightSpec, WeightStore } from '../weights/store.js';
import {
  convSpecs,
  downsample,
  linearSpecs,
  type NormOptions,
  normSpecs,
  resnet,
  resnetSpecs,
  transformer2d,
  transformerSpecs,
  upsample,
} from './blocks.js';
import { conv2d, groupNorm, linear, silu } from './layers.js';

/** UNet2DConditionModel config fields (spec 5.1). */
export interface UNetConfig {
  sample_size: number;
  in_channels: number;
  out_channels: number;
  block_out_channels: number[];
  layers_per_block: number;
  down_block_types: string[];
  up_block_types: string[];
  mid_block_type?: string;
  cross_attention_dim: number;
  attention_head_dim: number | number[];
  num_attention_heads?: number | number[] | null;
  use_linear_projection?: boolean;
  norm_num_groups: number;
  norm_eps: number;
  flip_sin_to_cos?: boolean;
  freq_shift?: number;
  transformer_layers_per_block?: number | number[];
  [key: string]: unknown;
}

/** Config keys that must keep their defaults: anything else is an architecture this engine lacks. */
const REQUIRED_DEFAULTS: Readonly<Record<string, unknown>> = {
  class_embed_type: null,
  num_class_embeds: null,
  addition_embed_type: null,
  encoder_hid_dim: null,
  encoder_hid_dim_type: null,
  time_cond_proj_dim: null,
  time_embedding_dim: null,
  time_embedding_act_fn: null,
  timestep_post_act: null,
  only_cross_attention: false,
  dual_cross_attention: false,
  attention_type: 'default',
  cross_attention_norm: null,
  resnet_skip_time_act: false,
  class_embeddings_concat: false,
  mid_block_only_cross_attention: null,
  reverse_transformer_layers_per_block: null,
  center_input_sample: false,
  resnet_time_scale_shift: 'default',
  time_embedding_type: 'positional',
};

export function validateUNetConfig(c: UNetConfig): void {
  for (const [key, def] of Object.entries(REQUIRED_DEFAULTS)) {
    const v = c[key];
    if (v !== undefined && v !== def) {
      throw new Error(
        `unet/config.json: ${key} = ${JSON.stringify(v)} is not supported (only ${JSON.stringify(def)})`,
      );
    }
  }
  if ((c.conv_in_kernel ?? 3) !== 3 || (c.conv_out_kernel ?? 3) !== 3)
    throw new Error('unet/config.json: only 3×3 conv_in/conv_out kernels are supported');
  for (const t of c.down_block_types)
    if (t !== 'DownBlock2D' && t !== 'CrossAttnDownBlock2D')
      throw new Error(`unet/config.json: down block type ${t} is not supported`);
  for (const t of c.up_block_types)
    if (t !== 'UpBlock2D' && t !== 'CrossAttnUpBlock2D')
      throw new Error(`unet/config.json: up block type ${t} is not supported`);
  if ((c.mid_block_type ?? 'UNetMidBlock2DCrossAttn') !== 'UNetMidBlock2DCrossAttn')
    throw new Error(`unet/config.json: mid block type ${c.mid_block_type} is not supported`);
}

const perBlock = (v: number | number[], n: number): number[] => (Array.isArray(v) ? v : Array(n).fill(v));

interface Layout {
  C: number[];
  heads: number[];
  layers: number[];
  temb: number;
}

function layout(c: UNetConfig): Layout {
  const N = c.block_out_channels.length;
  return {
    C: c.block_out_channels,
    heads: perBlock(c.num_attention_heads ?? c.attention_head_dim, N),
    layers: perBlock(c.transformer_layers_per_block ?? 1, N),
    temb: 4 * c.block_out_channels[0],
  };
}

export function unetWeightSpecs(c: UNetConfig): WeightSpec[] {
  const { C, layers, temb } = layout(c);
  const N = C.length;
  const n = c.layers_per_block;
  const lp = c.use_linear_projection ?? false;
  const X = c.cross_attention_dim;
  const s: WeightSpec[] = [
    ...convSpecs('conv_in', c.in_channels, C[0], 3),
    ...linearSpecs('time_embedding.linear_1', C[0], temb),
    ...linearSpecs('time_embedding.linear_2', temb, temb),
  ];
  for (let i = 0; i < N; i++) {
    const cross = c.down_block_types[i] === 'CrossAttnDownBlock2D';
    for (let j = 0; j < n; j++) {
      s.push(
        ...resnetSpecs(`down_blocks.${i}.resnets.${j}`, j === 0 ? C[Math.max(i - 1, 0)] : C[i], C[i], temb),
      );
      if (cross) s.push(...transformerSpecs(`down_blocks.${i}.attentions.${j}`, C[i], X, lp, layers[i]));
    }
    if (i < N - 1) s.push(...convSpecs(`down_blocks.${i}.downsamplers.0.conv`, C[i], C[i], 3));
  }
  const M = C[N - 1];
  s.push(
    ...resnetSpecs('mid_block.resnets.0', M, M, temb),
    ...transformerSpecs('mid_block.attentions.0', M, X, lp, layers[N - 1]),
    ...resnetSpecs('mid_block.resnets.1', M, M, temb),
  );
  const R = [...C].reverse();
  const RL = [...layers].reverse();
  for (let i = 0; i < N; i++) {
    const cross = c.up_block_types[i] === 'CrossAttnUpBlock2D';
    const prev = i === 0 ? R[0] : R[i - 1];
    const skipLast = R[Math.min(i + 1, N - 1)];
    for (let j = 0; j <= n; j++) {
      const cin = (j === 0 ? prev : R[i]) + (j === n ? skipLast : R[i]);
      s.push(...resnetSpecs(`up_blocks.${i}.resnets.${j}`, cin, R[i], temb));
      if (cross) s.push(...transformerSpecs(`up_blocks.${i}.attentions.${j}`, R[i], X, lp, RL[i]));
    }
    if (i < N - 1) s.push(...convSpecs(`up_blocks.${i}.upsamplers.0.conv`, R[i], R[i], 3));
  }
  s.push(...normSpecs('conv_norm_out', C[0]), ...convSpecs('conv_out', C[0], c.out_channels, 3));
  return s;
}

/**
 * Sinusoidal timestep embedding in float32 arithmetic, step by step as torch does it, so
 * large timesteps (t · freq ≈ 1000) round the same way as the reference.
 */
export function timestepEmbedding(
  t: number,
  dim: number,
  flipSinToCos: boolean,
  freqShift: number,
): Float32Array {
  const f = Math.fround;
  const half = dim / 2;
  const out = new Float32Array(dim);
  const lnMax = f(-Math.log(10000));
  for (let k = 0; k < half; k++) {
    const exponent = f(f(lnMax * k) / f(half - freqShift));
    const arg = f(f(t) * f(Math.exp(exponent)));
    const s = f(Math.sin(arg));
    const c = f(Math.cos(arg));
    if (flipSinToCos) {
      out[k] = c;
      out[half + k] = s;
    } else {
      out[k] = s;
      out[half + k] = c;
    }
  }
  return out;
}

/** UNet2DConditionModel forward in NHWC (spec 5.5). */
export class UNet2DConditionModel {
  private readonly lay: Layout;
  private readonly norm: NormOptions;

  constructor(
    readonly config: UNetConfig,
    readonly weights: WeightStore,
  ) {
    validateUNetConfig(config);
    this.lay = layout(config);
    this.norm = { groups: config.norm_num_groups, eps: config.norm_eps };
  }

  /** sample NHWC [B, h, w, 4], timestep scalar, context [B, 77, Dc] → NHWC prediction. */
  predict(sample: tf.Tensor4D, timestep: number, context: tf.Tensor3D): tf.Tensor4D {
    const c = this.config;
    const { C, heads, layers } = this.lay;
    const N = C.length;
    const n = c.layers_per_block;
    const lp = c.use_linear_projection ?? false;
    const G = c.norm_num_groups;
    const w = (name: string) => this.weights.get(name);
    return tf.tidy(() => {
      const B = sample.shape[0];
      const emb1 = timestepEmbedding(timestep, C[0], c.flip_sin_to_cos ?? true, c.freq_shift ?? 0);
      const emb = tf.tile(tf.tensor2d(emb1, [1, C[0]]), [B, 1]);
      const temb = linear(
        silu(linear(emb, w('time_embedding.linear_1.weight'), w('time_embedding.linear_1.bias'))),
        w('time_embedding.linear_2.weight'),
        w('time_embedding.linear_2.bias'),
      );
      const tembAct = silu(temb);
      let h: tf.Tensor = conv2d(sample, w('conv_in.weight'), w('conv_in.bias'));
      const skips: tf.Tensor[] = [h];
      for (let i = 0; i < N; i++) {
        const cross = c.down_block_types[i] === 'CrossAttnDownBlock2D';
        for (let j = 0; j < n; j++) {
          h = resnet(w, `down_blocks.${i}.resnets.${j}`, h, tembAct, this.norm);
          if (cross)
            h = transformer2d(w, `down_blocks.${i}.attentions.${j}`, h, context, heads[i], G, lp, layers[i]);
          skips.push(h);
        }
        if (i < N - 1) {
          h = downsample(w, `down_blocks.${i}.downsamplers.0`, h, 'same-as-torch');
          skips.push(h);
        }
      }
      h = resnet(w, 'mid_block.resnets.0', h, tembAct, this.norm);
      h = transformer2d(w, 'mid_block.attentions.0', h, context, heads[N - 1], G, lp, layers[N - 1]);
      h = resnet(w, 'mid_block.resnets.1', h, tembAct, this.norm);
      const RH = [...heads].reverse();
      const RL = [...layers].reverse();
      for (let i = 0; i < N; i++) {
        const cross = c.up_block_types[i] === 'CrossAttnUpBlock2D';
        for (let j = 0; j <= n; j++) {
          const s = skips.pop() as tf.Tensor;
          h = resnet(w, `up_blocks.${i}.resnets.${j}`, tf.concat([h, s], 3), tembAct, this.norm);
          if (cross) h = transformer2d(w, `up_blocks.${i}.attentions.${j}`, h, context, RH[i], G, lp, RL[i]);
        }
        if (i < N - 1) {
          // Upsample to the next skip's size so odd latent sizes work as in diffusers.
          const next = skips[skips.length - 1];
          h = upsample(w, `up_blocks.${i}.upsamplers.0`, h, [
            (next.shape as number[])[1],
            (next.shape as number[])[2],
          ]);
        }
      }
      h = silu(groupNorm(h, G, c.norm_eps, w('conv_norm_out.weight'), w('conv_norm_out.bias')));
      return conv2d(h, w('conv_out.weight'), w('conv_out.bias'));
    });
  }

  dispose(): void {
    this.weights.dispose();
  }
}
