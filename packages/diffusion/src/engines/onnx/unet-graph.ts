import { DataType } from '@tiffin/onnx';
import { downPathChannels } from '../../architectures/controlnet.js';
import { unetForward } from '../../architectures/unet.js';
import { contextWidth, hasTextTimeEmbedding, type UNetConfig } from '../../architectures/unet-config.js';
import type { GraphBuilder } from './graph-builder.js';
import { type AttentionOptions, OnnxOps } from './onnx-ops.js';

export const UNET_INPUTS = {
  /** NHWC [B, h, w, in_channels] */
  sample: 'sample',
  /** The sinusoidal embedding of the timestep [1, C0], computed in float32 by `timestepEmbedding`. */
  timeProj: 'timestep_embedding',
  /** [B, L, cross_attention_dim] */
  context: 'encoder_hidden_states',
  /** SDXL (`text_time`): pooled, projected text embeds [B, P] */
  textEmbeds: 'text_embeds',
  /** SDXL: the time ids' sinusoidal embeddings [B, n·addition_time_embed_dim], n = 6 (5 with an aesthetic score) */
  timeIds: 'time_ids_embedding',
} as const;
export const UNET_OUTPUT = 'out_sample';

/** The ControlNet residual inputs of a UNet graph built for ControlNets (NHWC, `k`: the down-path output). */
export const unetResidualInput = (k: number): string => `down_block_residual_${k}`;
export const UNET_MID_RESIDUAL = 'mid_block_residual';

/**
 * The UNet (`architectures/unet.ts`) as a graph, NHWC in and out. `controlResiduals`: with ControlNet residual inputs
 * (`unetResidualInput(k)`, `UNET_MID_RESIDUAL`), fed zeros on steps without control.
 */
export function buildUNetGraph(
  g: GraphBuilder,
  c: UNetConfig,
  opts: AttentionOptions,
  controlResiduals = false,
): void {
  const o = new OnnxOps(g, opts.kind);
  const C0 = c.block_out_channels[0];
  const sample = g.input(UNET_INPUTS.sample, DataType.FLOAT, ['batch', 'height', 'width', c.in_channels]);
  const proj = g.input(UNET_INPUTS.timeProj, DataType.FLOAT, [1, C0]);
  const context = g.input(UNET_INPUTS.context, DataType.FLOAT, ['batch', 'sequence', contextWidth(c)]);
  // The split between pooled embeds and time ids is the caller's (six ids for SDXL base, five with the refiner's
  // aesthetic score): the added embedding reads their concatenation, whose width the weights fix.
  const textTime = hasTextTimeEmbedding(c)
    ? () => ({
        textEmbeds: g.input(UNET_INPUTS.textEmbeds, DataType.FLOAT, ['batch', 'pooled_width']),
        timeIds: g.input(UNET_INPUTS.timeIds, DataType.FLOAT, ['batch', 'time_ids_width']),
      })
    : undefined;
  const controls = controlResiduals
    ? () => {
        const N = c.block_out_channels.length;
        const down = downPathChannels(c).map((ch, k) =>
          o.fromNhwc(g.input(unetResidualInput(k), DataType.FLOAT, ['batch', `rh${k}`, `rw${k}`, ch])),
        );
        const Cm = c.block_out_channels[N - 1];
        const mid = o.fromNhwc(g.input(UNET_MID_RESIDUAL, DataType.FLOAT, ['batch', 'mh', 'mw', Cm]));
        return { down, mid };
      }
    : undefined;
  const out = unetForward(o, c, o.fromNhwc(sample), {
    timeProj: () => proj,
    context,
    textTime,
    controlResiduals: controls,
  });
  g.output(o.toNhwc(out), UNET_OUTPUT, DataType.FLOAT, ['batch', 'height', 'width', c.out_channels]);
}
