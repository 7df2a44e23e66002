import type { ClipTextConfig } from '../../models/clip-text-encoder.js';
import type { GraphBuilder } from './graph-builder.js';
import { DataType } from './onnx-proto.js';
import { type AttentionOptions, attention, gelu, layerNorm, linear, quickGelu } from './ops.js';

/** Graph output: final_layer_norm of every hidden state, `[layers + 1, B, L, D]` (index `layers - clip_skip`). */
export const TEXT_ENCODER_OUTPUT = 'normed_hidden_states';
export const TEXT_ENCODER_INPUT = 'input_ids';

/**
 * transformers' CLIPTextModel (docs/spec/diffusion.md §4): int64 ids [B, L] → the final LayerNorm applied to each
 * hidden state, stacked, so `clip_skip` is an index rather than another graph (tiny extra cost).
 */
export function buildTextEncoderGraph(g: GraphBuilder, c: ClipTextConfig, opts: AttentionOptions): void {
  const D = c.hidden_size;
  const heads = c.num_attention_heads;
  const dh = D / heads;
  const ids = g.input(TEXT_ENCODER_INPUT, DataType.INT64, ['batch', 'sequence']);
  const L = g.node('Slice', [g.node('Shape', [ids]), g.ints([1]), g.ints([2])]);
  const zero = g.ints([0]);
  const positions = g.node('Slice', [
    g.weight('text_model.embeddings.position_embedding.weight'),
    zero,
    L,
    zero,
  ]);
  let x = g.node('Add', [
    g.node('Gather', [g.weight('text_model.embeddings.token_embedding.weight'), ids]),
    positions,
  ]);
  // Causal mask [L, L]: the most negative float of the graph's type above the diagonal (as transformers).
  const P = c.max_position_embeddings;
  const lowest = g.precision === 'f16' ? -65504 : -3.4028234663852886e38;
  const m = new Float32Array(P * P);
  for (let i = 0; i < P; i++) for (let j = i + 1; j < P; j++) m[i * P + j] = lowest;
  const mask = g.node('Slice', [
    g.floats(m, [P, P]),
    g.ints([0, 0]),
    g.node('Concat', [L, L], { axis: { kind: 'int', value: 0 } }),
  ]);
  const act = c.hidden_act === 'gelu' ? gelu : quickGelu;
  const hidden: string[] = [x];
  for (let i = 0; i < c.num_hidden_layers; i++) {
    const p = `text_model.encoder.layers.${i}`;
    const h = layerNorm(g, x, `${p}.layer_norm1`, c.layer_norm_eps);
    const q = linear(g, h, `${p}.self_attn.q_proj`);
    const k = linear(g, h, `${p}.self_attn.k_proj`);
    const v = linear(g, h, `${p}.self_attn.v_proj`);
    x = g.node('Add', [
      x,
      linear(g, attention(g, q, k, v, heads, dh, dh ** -0.5, opts, mask), `${p}.self_attn.out_proj`),
    ]);
    const h2 = layerNorm(g, x, `${p}.layer_norm2`, c.layer_norm_eps);
    x = g.node('Add', [x, linear(g, act(g, linear(g, h2, `${p}.mlp.fc1`)), `${p}.mlp.fc2`)]);
    hidden.push(x);
  }
  const axis0 = g.ints([0]);
  const stacked = g.node(
    'Concat',
    hidden.map((t) => g.node('Unsqueeze', [t, axis0])),
    { axis: { kind: 'int', value: 0 } },
  );
  const normed = layerNorm(g, stacked, 'text_model.final_layer_norm', c.layer_norm_eps);
  g.output(normed, TEXT_ENCODER_OUTPUT, DataType.FLOAT, [c.num_hidden_layers + 1, 'batch', 'sequence', D]);
}
