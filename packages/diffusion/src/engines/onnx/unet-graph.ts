import { type UNetConfig, unetLayout } from '../../models/unet-config.js';
import type { GraphBuilder } from './graph-builder.js';
import { DataType } from './onnx-proto.js';
import {
  type AttentionOptions,
  conv,
  fromNhwc,
  groupNorm,
  linear,
  type NormOptions,
  resnet,
  silu,
  toNhwc,
  transformer2d,
  upsample,
} from './ops.js';

export const UNET_INPUTS = {
  /** NHWC [B, h, w, in_channels] */
  sample: 'sample',
  /** The sinusoidal embedding of the timestep [1, C0], computed in float32 by `timestepEmbedding`. */
  timeProj: 'timestep_embedding',
  /** [B, L, cross_attention_dim] */
  context: 'encoder_hidden_states',
} as const;
export const UNET_OUTPUT = 'out_sample';

/** UNet2DConditionModel (docs/spec/diffusion.md §5.5), NHWC in and out. */
export function buildUNetGraph(g: GraphBuilder, c: UNetConfig, opts: AttentionOptions): void {
  const { C, heads, layers } = unetLayout(c);
  const N = C.length;
  const n = c.layers_per_block;
  const lp = c.use_linear_projection ?? false;
  const G = c.norm_num_groups;
  const norm: NormOptions = { groups: G, eps: c.norm_eps };
  const sample = g.input(UNET_INPUTS.sample, DataType.FLOAT, ['batch', 'height', 'width', c.in_channels]);
  const proj = g.input(UNET_INPUTS.timeProj, DataType.FLOAT, [1, C[0]]);
  const context = g.input(UNET_INPUTS.context, DataType.FLOAT, ['batch', 'sequence', c.cross_attention_dim]);

  const temb = linear(g, silu(g, linear(g, proj, 'time_embedding.linear_1')), 'time_embedding.linear_2');
  const tembAct = silu(g, temb);
  let h = conv(g, fromNhwc(g, sample), 'conv_in', 3);
  const skips = [h];
  const tf = (p: string, x: string, i: number, hd: number, depth: number) =>
    transformer2d(g, p, x, context, {
      ...opts,
      channels: C[i],
      heads: hd,
      groups: G,
      linearProj: lp,
      layers: depth,
    });
  for (let i = 0; i < N; i++) {
    const p = `down_blocks.${i}`;
    const cross = c.down_block_types[i] === 'CrossAttnDownBlock2D';
    for (let j = 0; j < n; j++) {
      h = resnet(g, `${p}.resnets.${j}`, h, tembAct, norm);
      if (cross) h = tf(`${p}.attentions.${j}`, h, i, heads[i], layers[i]);
      skips.push(h);
    }
    if (i < N - 1) {
      h = conv(g, h, `${p}.downsamplers.0.conv`, 3, 2);
      skips.push(h);
    }
  }
  h = resnet(g, 'mid_block.resnets.0', h, tembAct, norm);
  h = tf('mid_block.attentions.0', h, N - 1, heads[N - 1], layers[N - 1]);
  h = resnet(g, 'mid_block.resnets.1', h, tembAct, norm);
  const RH = [...heads].reverse();
  const RL = [...layers].reverse();
  const concatC = (a: string, b: string) => g.node('Concat', [a, b], { axis: { kind: 'int', value: 1 } });
  for (let i = 0; i < N; i++) {
    const p = `up_blocks.${i}`;
    const cross = c.up_block_types[i] === 'CrossAttnUpBlock2D';
    for (let j = 0; j <= n; j++) {
      h = resnet(g, `${p}.resnets.${j}`, concatC(h, skips.pop() as string), tembAct, norm);
      if (cross) h = tf(`${p}.attentions.${j}`, h, N - 1 - i, RH[i], RL[i]);
    }
    // Upsample to the next skip's size so odd latent sizes work as in diffusers.
    if (i < N - 1) h = upsample(g, `${p}.upsamplers.0`, h, skips[skips.length - 1]);
  }
  h = conv(g, silu(g, groupNorm(g, h, 'conv_norm_out', G, c.norm_eps)), 'conv_out', 3);
  g.output(toNhwc(g, h), UNET_OUTPUT, DataType.FLOAT, ['batch', 'height', 'width', c.out_channels]);
}
