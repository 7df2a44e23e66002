import * as tf from '@tensorflow/tfjs';
import type { WeightSpec, WeightStore } from '../weights/store.js';
import { attention, gelu, layerNorm, linear, quickGelu } from './layers.js';
import { branchesByTensor, type LowRankBranchesByName, withLowRankBranches } from './low-rank.js';

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
}

export function clipTextWeightSpecs(c: ClipTextConfig): WeightSpec[] {
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
  return specs;
}

export interface ClipTextOutput {
  /** [B, L, D] after the final LayerNorm. */
  lastHiddenState: tf.Tensor3D;
}

/** transformers' CLIPTextModel forward (docs/spec/diffusion.md §4). */
export class ClipTextEncoder {
  private readonly mask: tf.Tensor2D;

  constructor(
    readonly config: ClipTextConfig,
    readonly weights: WeightStore,
  ) {
    const L = config.max_position_embeddings;
    const m = new Float32Array(L * L);
    for (let i = 0; i < L; i++) for (let j = i + 1; j < L; j++) m[i * L + j] = -3.4028234663852886e38;
    this.mask = tf.keep(tf.tensor2d(m, [L, L]));
  }

  /**
   * Encode token ids [B][L]. `clipSkip` k > 0 returns final_layer_norm(hidden_states[-(k+1)]).
   * `lora`: low-rank branches added at run time (unfused LoRA), keyed by weight name.
   */
  encode(ids: readonly (readonly number[])[], clipSkip = 0, lora?: LowRankBranchesByName): ClipTextOutput {
    const w = (n: string) => this.weights.get(n);
    return withLowRankBranches(branchesByTensor(lora, w), () => this.forward(ids, clipSkip));
  }

  private forward(ids: readonly (readonly number[])[], clipSkip: number): ClipTextOutput {
    const c = this.config;
    const w = (n: string) => this.weights.get(n);
    const B = ids.length;
    const L = ids[0].length;
    const last = tf.tidy(() => {
      const idT = tf.tensor2d(ids.flat(), [B, L], 'int32');
      let x = tf.add(
        tf.gather(w('text_model.embeddings.token_embedding.weight'), idT),
        w('text_model.embeddings.position_embedding.weight').slice([0, 0], [L, c.hidden_size]),
      );
      const mask = L === c.max_position_embeddings ? this.mask : this.mask.slice([0, 0], [L, L]);
      const heads = c.num_attention_heads;
      const dh = c.hidden_size / heads;
      const act = c.hidden_act === 'gelu' ? gelu : quickGelu;
      const layers = c.num_hidden_layers - clipSkip;
      for (let i = 0; i < layers; i++) {
        const p = `text_model.encoder.layers.${i}`;
        const lin = (name: string, t: tf.Tensor) =>
          linear(t, w(`${p}.${name}.weight`), w(`${p}.${name}.bias`));
        const h = layerNorm(x, c.layer_norm_eps, w(`${p}.layer_norm1.weight`), w(`${p}.layer_norm1.bias`));
        const q = tf.mul(lin('self_attn.q_proj', h), dh ** -0.5);
        const k = lin('self_attn.k_proj', h);
        const v = lin('self_attn.v_proj', h);
        x = tf.add(x, lin('self_attn.out_proj', attention(q, k, v, heads, 1, mask)));
        const h2 = layerNorm(x, c.layer_norm_eps, w(`${p}.layer_norm2.weight`), w(`${p}.layer_norm2.bias`));
        x = tf.add(x, lin('mlp.fc2', act(lin('mlp.fc1', h2))));
      }
      return layerNorm(
        x,
        c.layer_norm_eps,
        w('text_model.final_layer_norm.weight'),
        w('text_model.final_layer_norm.bias'),
      ) as tf.Tensor3D;
    });
    return { lastHiddenState: last };
  }

  dispose(): void {
    this.mask.dispose();
    this.weights.dispose();
  }
}
