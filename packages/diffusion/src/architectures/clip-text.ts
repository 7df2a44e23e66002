import { DeclareOps } from '../ops/declare-ops.js';
import type { Ops } from '../ops/ops.js';
import type { WeightSpec } from '../weights/weight-spec.js';

/** The fields of transformers' CLIPTextConfig this encoder uses (docs/spec/diffusion.md §4). */
export interface ClipTextConfig {
  vocab_size: number;
  hidden_size: number;
  intermediate_size: number;
  num_hidden_layers: number;
  num_attention_heads: number;
  max_position_embeddings: number;
  hidden_act: 'quick_gelu' | 'gelu';
  layer_norm_eps: number;
  eos_token_id?: number;
  /** Width of `text_projection` (CLIPTextModelWithProjection: SDXL's second encoder). */
  projection_dim?: number;
}

/**
 * transformers' CLIPTextModel encoder (docs/spec/diffusion.md §4): token ids `[B, L]` → the hidden states, the
 * embeddings first, then after each of the first `depth` layers (all layers by default). The final LayerNorm is
 * {@link clipFinalNorm}, applied by the caller to the state it wants (clip skip).
 */
export function clipTextHiddenStates<T>(
  o: Ops<T>,
  c: ClipTextConfig,
  ids: T,
  depth = c.num_hidden_layers,
): T[] {
  let x = o.tokenEmbedding(
    ids,
    'text_model.embeddings.token_embedding.weight',
    'text_model.embeddings.position_embedding.weight',
    { vocab: c.vocab_size, positions: c.max_position_embeddings, dim: c.hidden_size },
  );
  const mask = o.causalMask(ids, c.max_position_embeddings);
  const heads = c.num_attention_heads;
  const D = c.hidden_size;
  const headDim = D / heads;
  const act = (t: T) => (c.hidden_act === 'gelu' ? o.gelu(t) : o.quickGelu(t));
  const hidden = [x];
  for (let i = 0; i < depth; i++) {
    const p = `text_model.encoder.layers.${i}`;
    const h = o.layerNorm(x, `${p}.layer_norm1`, c.layer_norm_eps);
    const q = o.linear(h, `${p}.self_attn.q_proj`, D);
    const k = o.linear(h, `${p}.self_attn.k_proj`, D);
    const v = o.linear(h, `${p}.self_attn.v_proj`, D);
    const attended = o.attention(q, k, v, { heads, headDim, scale: headDim ** -0.5, mask });
    x = o.add(x, o.linear(attended, `${p}.self_attn.out_proj`, D));
    const h2 = o.layerNorm(x, `${p}.layer_norm2`, c.layer_norm_eps);
    x = o.add(x, o.linear(act(o.linear(h2, `${p}.mlp.fc1`, c.intermediate_size)), `${p}.mlp.fc2`, D));
    hidden.push(x);
  }
  return hidden;
}

/** The encoder's final LayerNorm (of any hidden state, or of several stacked on a leading axis). */
export function clipFinalNorm<T>(o: Ops<T>, c: ClipTextConfig, hidden: T): T {
  return o.layerNorm(hidden, 'text_model.final_layer_norm', c.layer_norm_eps);
}

/**
 * The pooled output's position per sequence, as transformers picks it: the first `eos_token_id`, or the highest id
 * for configs from before it was set (`eos_token_id` 2).
 */
export function eosPositions(c: ClipTextConfig, ids: readonly (readonly number[])[]): number[] {
  const eos = c.eos_token_id ?? 2;
  return ids.map((row) => {
    if (eos === 2) return row.indexOf(Math.max(...row));
    const at = row.indexOf(eos);
    return at < 0 ? row.length - 1 : at;
  });
}

/**
 * CLIPTextModelWithProjection's `text_embeds` `[B, projection_dim]`: the final-normed last hidden state at each
 * sequence's pooled position (`eosPositions`, integer `[B]`), projected.
 */
export function clipTextEmbeds<T>(o: Ops<T>, c: ClipTextConfig, lastHidden: T, positions: T): T {
  const pooled = o.pickTokens(clipFinalNorm(o, c, lastHidden), positions);
  return o.linear(pooled, 'text_projection', c.projection_dim as number, false);
}

/**
 * The weights the encoder reads (diffusers/transformers names, torch shapes), from its definition.
 * `withProjection`: CLIPTextModelWithProjection, whose pooled output goes through `text_projection`.
 */
export function clipTextWeightSpecs(c: ClipTextConfig, withProjection = false): WeightSpec[] {
  const o = new DeclareOps();
  const hidden = clipTextHiddenStates(o, c, [1, c.max_position_embeddings]);
  const last = hidden[hidden.length - 1];
  clipFinalNorm(o, c, last);
  if (withProjection) {
    if (!c.projection_dim) throw new Error('text_encoder config: projection_dim is missing');
    clipTextEmbeds(o, c, last, [1]);
  }
  return o.specs();
}
