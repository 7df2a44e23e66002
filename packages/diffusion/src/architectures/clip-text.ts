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

/** `withProjection`: CLIPTextModelWithProjection, whose pooled output goes through `text_projection`. */
export function clipTextWeightSpecs(c: ClipTextConfig, withProjection = false): WeightSpec[] {
  const D = c.hidden_size;
  const I = c.intermediate_size;
  const specs: WeightSpec[] = [
    { name: 'text_model.embeddings.token_embedding.weight', shape: [c.vocab_size, D], kind: 'plain' },
    {
      name: 'text_model.embeddings.position_embedding.weight',
      shape: [c.max_position_embeddings, D],
      kind: 'plain',
    },
  ];
  for (let i = 0; i < c.num_hidden_layers; i++) {
    const p = `text_model.encoder.layers.${i}`;
    for (const ln of ['layer_norm1', 'layer_norm2']) {
      specs.push({ name: `${p}.${ln}.weight`, shape: [D], kind: 'plain' });
      specs.push({ name: `${p}.${ln}.bias`, shape: [D], kind: 'plain' });
    }
    for (const proj of ['q_proj', 'k_proj', 'v_proj', 'out_proj']) {
      specs.push({ name: `${p}.self_attn.${proj}.weight`, shape: [D, D], kind: 'linear' });
      specs.push({ name: `${p}.self_attn.${proj}.bias`, shape: [D], kind: 'plain' });
    }
    specs.push({ name: `${p}.mlp.fc1.weight`, shape: [I, D], kind: 'linear' });
    specs.push({ name: `${p}.mlp.fc1.bias`, shape: [I], kind: 'plain' });
    specs.push({ name: `${p}.mlp.fc2.weight`, shape: [D, I], kind: 'linear' });
    specs.push({ name: `${p}.mlp.fc2.bias`, shape: [D], kind: 'plain' });
  }
  specs.push({ name: 'text_model.final_layer_norm.weight', shape: [D], kind: 'plain' });
  specs.push({ name: 'text_model.final_layer_norm.bias', shape: [D], kind: 'plain' });
  if (withProjection) {
    if (!c.projection_dim) throw new Error('text_encoder config: projection_dim is missing');
    specs.push({ name: 'text_projection.weight', shape: [c.projection_dim, D], kind: 'linear' });
  }
  return specs;
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
  );
  const mask = o.causalMask(ids, c.max_position_embeddings);
  const heads = c.num_attention_heads;
  const headDim = c.hidden_size / heads;
  const act = (t: T) => (c.hidden_act === 'gelu' ? o.gelu(t) : o.quickGelu(t));
  const hidden = [x];
  for (let i = 0; i < depth; i++) {
    const p = `text_model.encoder.layers.${i}`;
    const h = o.layerNorm(x, `${p}.layer_norm1`, c.layer_norm_eps);
    const q = o.linear(h, `${p}.self_attn.q_proj`);
    const k = o.linear(h, `${p}.self_attn.k_proj`);
    const v = o.linear(h, `${p}.self_attn.v_proj`);
    const attended = o.attention(q, k, v, { heads, headDim, scale: headDim ** -0.5, mask });
    x = o.add(x, o.linear(attended, `${p}.self_attn.out_proj`));
    const h2 = o.layerNorm(x, `${p}.layer_norm2`, c.layer_norm_eps);
    x = o.add(x, o.linear(act(o.linear(h2, `${p}.mlp.fc1`)), `${p}.mlp.fc2`));
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
  return o.linear(o.pickTokens(clipFinalNorm(o, c, lastHidden), positions), 'text_projection', false);
}
