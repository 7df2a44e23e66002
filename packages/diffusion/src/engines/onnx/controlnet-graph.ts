import { DataType } from '@tiffin/onnx';
import { controlNetForward, controlNetResidualChannels } from '../../architectures/controlnet.js';
import { type ControlNetConfig, controlNetAsUNet } from '../../architectures/controlnet-config.js';
import { TIME_IDS } from '../../architectures/timestep-embedding.js';
import { contextWidth, hasTextTimeEmbedding } from '../../architectures/unet-config.js';
import type { GraphBuilder } from './graph-builder.js';
import { type AttentionOptions, OnnxOps } from './onnx-ops.js';
import { UNET_INPUTS } from './unet-graph.js';

/** The ControlNet graph's inputs: the UNet's, plus the conditioning image NHWC [B, 8h, 8w, 3] in [0, 1]. */
export const CONTROLNET_INPUTS = { ...UNET_INPUTS, image: 'controlnet_cond' } as const;
/** Output `k`: the k-th down-path residual (NHWC); and the mid block's. */
export const controlNetDownOutput = (k: number): string => `down_block_res_sample_${k}`;
export const CONTROLNET_MID_OUTPUT = 'mid_block_res_sample';

/** The ControlNet (`architectures/controlnet.ts`) as a graph, NHWC in and out, residuals unscaled. */
export function buildControlNetGraph(g: GraphBuilder, c: ControlNetConfig, opts: AttentionOptions): void {
  const o = new OnnxOps(g, opts.kind);
  const u = controlNetAsUNet(c);
  const C0 = u.block_out_channels[0];
  const sample = g.input(CONTROLNET_INPUTS.sample, DataType.FLOAT, [
    'batch',
    'height',
    'width',
    u.in_channels,
  ]);
  const image = g.input(CONTROLNET_INPUTS.image, DataType.FLOAT, ['batch', 'image_height', 'image_width', 3]);
  const proj = g.input(CONTROLNET_INPUTS.timeProj, DataType.FLOAT, [1, C0]);
  const context = g.input(CONTROLNET_INPUTS.context, DataType.FLOAT, ['batch', 'sequence', contextWidth(u)]);
  const Dt = u.addition_time_embed_dim ?? 0;
  const textTime = hasTextTimeEmbedding(u)
    ? () => ({
        textEmbeds: g.input(CONTROLNET_INPUTS.textEmbeds, DataType.FLOAT, [
          'batch',
          (u.projection_class_embeddings_input_dim as number) - TIME_IDS * Dt,
        ]),
        timeIds: g.input(CONTROLNET_INPUTS.timeIds, DataType.FLOAT, ['batch', TIME_IDS * Dt]),
      })
    : undefined;
  const out = controlNetForward(o, c, o.fromNhwc(sample), o.fromNhwc(image), {
    timeProj: () => proj,
    context,
    textTime,
  });
  const channels = controlNetResidualChannels(c);
  for (const [k, d] of out.down.entries())
    g.output(o.toNhwc(d), controlNetDownOutput(k), DataType.FLOAT, ['batch', `h${k}`, `w${k}`, channels[k]]);
  const Cm = channels[channels.length - 1];
  g.output(o.toNhwc(out.mid), CONTROLNET_MID_OUTPUT, DataType.FLOAT, ['batch', 'mh', 'mw', Cm]);
}
