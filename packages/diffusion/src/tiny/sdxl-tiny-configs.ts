import type { ClipTextConfig } from '../architectures/clip-text.js';
import type { UNetConfig } from '../architectures/unet-config.js';

/**
 * A small random SDXL-shaped model: a 3-level UNet with no attention in its first down block, transformer depth per
 * block, a `text_time` added embedding (pooled text embeds + 6 time ids), and two text encoders whose penultimate
 * states concatenate into the cross-attention context (the second with `text_projection`, GELU, legacy EOS).
 */
export function sdxlTinyConfigs(): {
  textEncoder: ClipTextConfig;
  textEncoder2: ClipTextConfig;
  unet: UNetConfig;
} {
  const clip = (hidden: number, act: ClipTextConfig['hidden_act'], eos: number): ClipTextConfig => ({
    vocab_size: 1000,
    hidden_size: hidden,
    intermediate_size: 2 * hidden,
    num_hidden_layers: 3,
    num_attention_heads: 4,
    max_position_embeddings: 77,
    hidden_act: act,
    layer_norm_eps: 1e-5,
    eos_token_id: eos,
    projection_dim: hidden,
  });
  return {
    textEncoder: clip(32, 'quick_gelu', 999),
    textEncoder2: clip(32, 'gelu', 2),
    unet: {
      sample_size: 16,
      in_channels: 4,
      out_channels: 4,
      block_out_channels: [32, 64, 64],
      layers_per_block: 2,
      down_block_types: ['DownBlock2D', 'CrossAttnDownBlock2D', 'CrossAttnDownBlock2D'],
      up_block_types: ['CrossAttnUpBlock2D', 'CrossAttnUpBlock2D', 'UpBlock2D'],
      cross_attention_dim: 64,
      attention_head_dim: [2, 4, 8],
      num_attention_heads: null,
      transformer_layers_per_block: [1, 2, 3],
      use_linear_projection: true,
      norm_num_groups: 32,
      norm_eps: 1e-5,
      flip_sin_to_cos: true,
      freq_shift: 0,
      addition_embed_type: 'text_time',
      addition_time_embed_dim: 8,
      projection_class_embeddings_input_dim: 32 + 6 * 8,
    },
  };
}
