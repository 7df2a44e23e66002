import { DataType } from '@tiffin/onnx';
import { type TinyAutoencoderConfig, tinyDecode } from '../../architectures/tiny-autoencoder.js';
import type { GraphBuilder } from './graph-builder.js';
import { type AttentionOptions, OnnxOps } from './onnx-ops.js';

export const TINY_DECODER_IO = { input: 'latents', output: 'image' } as const;

/** The tiny autoencoder's decoder (`architectures/tiny-autoencoder.ts`) as a graph: NHWC latents → NHWC image. */
export function buildTinyDecoderGraph(
  g: GraphBuilder,
  c: TinyAutoencoderConfig,
  opts: AttentionOptions,
): void {
  const o = new OnnxOps(g, opts.kind);
  const z = g.input(TINY_DECODER_IO.input, DataType.FLOAT, ['batch', 'height', 'width', c.latent_channels]);
  const image = tinyDecode(o, c, o.fromNhwc(z));
  g.output(o.toNhwc(image), TINY_DECODER_IO.output, DataType.FLOAT, [
    'batch',
    'out_height',
    'out_width',
    c.out_channels,
  ]);
}
