import { DeclareOps } from '../ops/declare-ops.js';
import type { Ops } from '../ops/ops.js';
import type { WeightSpec } from '../weights/weight-spec.js';
import { type ControlNetConfig, conditioningWidths, controlNetAsUNet } from './controlnet-config.js';
import { TIME_IDS } from './timestep-embedding.js';
import {
  type ControlResiduals,
  type UNetActivations,
  type UNetConditioning,
  unetStageDefinitions,
} from './unet.js';
import { hasTextTimeEmbedding, type UNetConfig } from './unet-config.js';
import { unetLayout } from './unet-layout.js';

/**
 * diffusers' `ControlNetModel` (docs/spec/diffusion.md §8.4; §5.5 for the blocks it shares with the UNet): the UNet's time
 * embedding, conv_in, down blocks and mid block (the same stage definitions as `unet.ts`), the conditioning image's
 * embedding added after conv_in, and a 1×1 "zero" conv on every down-path output and on the mid block's output.
 * The residuals come out unscaled: conditioning_scale, guess mode and global pooling are applied by the caller
 * (`pipeline/controlnet-residuals.ts`), on host arrays, as diffusers applies them after these convs.
 */

/** The ControlNet's residuals, in the order the UNet's down path produces its outputs. */
export type ControlNetOutputs<T> = ControlResiduals<T>;

/** The UNet stages a ControlNet runs: everything before the up path. */
const ENCODER_STAGE = /^(conv_in\+time_embedding|down_blocks\.\d+|mid_block)$/;

/** The channels of a ControlNet's residuals (`downPathChannels` of its encoder half). */
export const controlNetResidualChannels = (c: ControlNetConfig): number[] =>
  downPathChannels(controlNetAsUNet(c));

/**
 * Channels of each down-path output of a UNet (conv_in's, each layer's, each downsampler's) in the order the skips
 * are pushed: the residuals a ControlNet gives it.
 */
export function downPathChannels(u: UNetConfig): number[] {
  const { C, down } = unetLayout(u);
  const out = [C[0]];
  down.forEach((b, i) => {
    for (let j = 0; j < b.layers; j++) out.push(b.channels);
    if (i < C.length - 1) out.push(b.channels);
  });
  return out;
}

/** ControlNetConditioningEmbedding: conv_in, (conv, conv stride 2) per width step, each silu'd, then conv_out. */
function conditioningEmbedding<T>(o: Ops<T>, c: ControlNetConfig, image: T, channels: number): T {
  const widths = conditioningWidths(c);
  const p = 'controlnet_cond_embedding';
  let h = o.silu(o.conv2d(image, `${p}.conv_in`, widths[0], 3));
  for (let i = 0; i < widths.length - 1; i++) {
    h = o.block(() => o.silu(o.conv2d(h, `${p}.blocks.${2 * i}`, widths[i], 3)));
    const x = h;
    h = o.block(() => o.silu(o.conv2d(x, `${p}.blocks.${2 * i + 1}`, widths[i + 1], 3, 2)));
  }
  return o.conv2d(h, `${p}.conv_out`, channels, 3);
}

/**
 * The ControlNet's forward pass: latents `sample` and the conditioning image `controlCond` (`[B, 3, 8h, 8w]` in
 * [0, 1], RGB or as the config orders it) → the unscaled residuals.
 */
export function controlNetForward<T>(
  o: Ops<T>,
  c: ControlNetConfig,
  sample: T,
  controlCond: T,
  cond: UNetConditioning<T>,
): ControlNetOutputs<T> {
  const u = controlNetAsUNet(c);
  const C0 = u.block_out_channels[0];
  const stages = unetStageDefinitions(u).filter((s) => ENCODER_STAGE.test(s.name));
  let a: UNetActivations<T> = { h: sample, skips: [], tembAct: null };
  const encoderCond: UNetConditioning<T> = { ...cond, controlResiduals: undefined };
  for (const stage of stages) {
    a = stage.run(o, a, encoderCond);
    if (stage.name === 'conv_in+time_embedding') {
      // diffusers: sample = conv_in(sample) + controlnet_cond_embedding(controlnet_cond), the first skip too.
      const h = o.add(
        a.h,
        o.block(() => conditioningEmbedding(o, c, controlCond, C0)),
      );
      a = { h, skips: [h], tembAct: a.tembAct };
    }
  }
  const channels = downPathChannels(u);
  const down = a.skips.map((s, k) => o.conv2d(s, `controlnet_down_blocks.${k}`, channels[k], 1));
  const Cm = u.block_out_channels[u.block_out_channels.length - 1];
  return { down, mid: o.conv2d(a.h, 'controlnet_mid_block', Cm, 1) };
}

/** The weights a ControlNet reads (diffusers names, torch shapes), from its definition. */
export function controlNetWeightSpecs(c: ControlNetConfig): WeightSpec[] {
  const o = new DeclareOps();
  const u = controlNetAsUNet(c);
  const size = 2 ** u.block_out_channels.length;
  const scale = 2 ** (conditioningWidths(c).length - 1);
  const timeIds = TIME_IDS * (u.addition_time_embed_dim ?? 0);
  const textTime = () => ({
    textEmbeds: [1, (u.projection_class_embeddings_input_dim ?? 0) - timeIds],
    timeIds: [1, timeIds],
  });
  controlNetForward(o, c, [1, u.in_channels, size, size], [1, 3, size * scale, size * scale], {
    timeProj: () => [1, u.block_out_channels[0]],
    context: [1, 1, unetLayout(u).contextDim],
    textTime: hasTextTimeEmbedding(u) ? textTime : undefined,
  });
  return o.specs();
}
