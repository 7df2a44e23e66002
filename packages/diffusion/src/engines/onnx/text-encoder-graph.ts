import { DataType } from '@tiffin/onnx';
import {
  type ClipTextConfig,
  clipFinalNorm,
  clipTextEmbeds,
  clipTextHiddenStates,
} from '../../architectures/clip-text.js';
import type { GraphBuilder } from './graph-builder.js';
import { type AttentionOptions, OnnxOps } from './onnx-ops.js';

/** Graph output: final_layer_norm of every hidden state, `[layers + 1, B, L, D]` (index `layers - clip_skip`). */
export const TEXT_ENCODER_OUTPUT = 'normed_hidden_states';
export const TEXT_ENCODER_INPUT = 'input_ids';

/**
 * The CLIP text encoder (`architectures/clip-text.ts`) as a graph: int64 ids [B, L] → the final LayerNorm applied
 * to each hidden state, stacked, so `clip_skip` is an index rather than another graph (tiny extra cost).
 */
export function buildTextEncoderGraph(g: GraphBuilder, c: ClipTextConfig, opts: AttentionOptions): void {
  const o = new OnnxOps(g, opts.kind);
  const ids = g.input(TEXT_ENCODER_INPUT, DataType.INT64, ['batch', 'sequence']);
  const hidden = clipTextHiddenStates(o, c, ids);
  const axis0 = g.ints([0]);
  const stacked = g.node(
    'Concat',
    hidden.map((t) => g.node('Unsqueeze', [t, axis0])),
    { axis: { kind: 'int', value: 0 } },
  );
  g.output(clipFinalNorm(o, c, stacked), TEXT_ENCODER_OUTPUT, DataType.FLOAT, [
    c.num_hidden_layers + 1,
    'batch',
    'sequence',
    c.hidden_size,
  ]);
}

/** The SDXL text encoder graphs' names: ids and pooled positions in, penultimate state and text embeds out. */
export const SDXL_TEXT_ENCODER_IO = {
  ids: TEXT_ENCODER_INPUT,
  /** int64 [B]: `eosPositions` of each sequence (graphs with `text_projection` only) */
  eosPositions: 'eos_positions',
  penultimate: 'penultimate_hidden_state',
  textEmbeds: 'text_embeds',
} as const;

/**
 * The CLIP text encoder as SDXL uses it: `hidden_states[-2]` (no final LayerNorm), and with `withProjection`
 * (its second encoder) the projected pooled output.
 */
export function buildSdxlTextEncoderGraph(
  g: GraphBuilder,
  c: ClipTextConfig,
  opts: AttentionOptions,
  withProjection: boolean,
): void {
  const o = new OnnxOps(g, opts.kind);
  const io = SDXL_TEXT_ENCODER_IO;
  const ids = g.input(io.ids, DataType.INT64, ['batch', 'sequence']);
  const hidden = clipTextHiddenStates(o, c, ids);
  g.output(hidden[hidden.length - 2], io.penultimate, DataType.FLOAT, ['batch', 'sequence', c.hidden_size]);
  if (!withProjection) return;
  const positions = g.input(io.eosPositions, DataType.INT64, ['batch']);
  const embeds = clipTextEmbeds(o, c, hidden[hidden.length - 1], positions);
  g.output(embeds, io.textEmbeds, DataType.FLOAT, ['batch', c.projection_dim as number]);
}
