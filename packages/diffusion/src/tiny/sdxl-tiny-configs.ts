import type { ClipTextConfig } from '../architectures/clip-text.js';
import type { UNetConfig } from '../architectures/unet-config.js';
import { sdxlReferenceConfigs } from '../families/pipelines.js';
import { tinyConfigs } from './tiny-configs.js';

/**
 * A small random SDXL-shaped model: a 3-level UNet with no attention in its first down block, transformer depth per
 * block, a `text_time` added embedding (pooled text embeds + 6 time ids), and two text encoders of different widths
 * whose penultimate states concatenate into the cross-attention context (the second with a non-square
 * `text_projection`, GELU). Both encoders use eos_token_id 2 as SDXL's configs do (transformers' legacy rule: the
 * pooled position is the highest token id, the tokenizer's EOS).
 */
export function sdxlTinyConfigs(): {
  textEncoder: ClipTextConfig;
  textEncoder2: ClipTextConfig;
  unet: UNetConfig;
} {
  const clip = (hidden: number, act: ClipTextConfig['hidden_act'], projection: number): ClipTextConfig => ({
    vocab_size: 1000,
    hidden_size: hidden,
    intermediate_size: 2 * hidden,
    num_hidden_layers: 3,
    num_attention_heads: 4,
    max_position_embeddings: 77,
    hidden_act: act,
    layer_norm_eps: 1e-5,
    eos_token_id: 2,
    projection_dim: projection,
  });
  const textEncoder = clip(32, 'quick_gelu', 32);
  const textEncoder2 = clip(48, 'gelu', 40);
  const timeDim = 8;
  return {
    textEncoder,
    textEncoder2,
    unet: {
      sample_size: 16,
      in_channels: 4,
      out_channels: 4,
      block_out_channels: [32, 64, 64],
      layers_per_block: 2,
      down_block_types: ['DownBlock2D', 'CrossAttnDownBlock2D', 'CrossAttnDownBlock2D'],
      up_block_types: ['CrossAttnUpBlock2D', 'CrossAttnUpBlock2D', 'UpBlock2D'],
      cross_attention_dim: textEncoder.hidden_size + textEncoder2.hidden_size,
      attention_head_dim: [2, 4, 8],
      num_attention_heads: null,
      transformer_layers_per_block: [1, 2, 3],
      use_linear_projection: true,
      norm_num_groups: 32,
      norm_eps: 1e-5,
      flip_sin_to_cos: true,
      freq_shift: 0,
      addition_embed_type: 'text_time',
      addition_time_embed_dim: timeDim,
      projection_class_embeddings_input_dim: (textEncoder2.projection_dim as number) + 6 * timeDim,
    },
  };
}

/**
 * The diffusers JSON of the tiny SDXL folder (flavour "sdxl", docs/spec/diffusion.md §11.1): SDXL base 1.0's
 * model index and scheduler (`families/pipelines.ts`; tokenizer_2 padding with "!", VAE scaling 0.13025) around the
 * networks of {@link sdxlTinyConfigs}.
 */
export function sdxlTinyFolderConfigs() {
  const sd = tinyConfigs('sd2');
  const net = sdxlTinyConfigs();
  const { modelIndex, scheduler } = sdxlReferenceConfigs();
  const encoderJson = (c: ClipTextConfig, architecture: string) => ({
    ...sd.textEncoder,
    architectures: [architecture],
    bos_token_id: 0,
    eos_token_id: c.eos_token_id,
    hidden_act: c.hidden_act,
    hidden_size: c.hidden_size,
    intermediate_size: c.intermediate_size,
    num_attention_heads: c.num_attention_heads,
    num_hidden_layers: c.num_hidden_layers,
    pad_token_id: 1,
    projection_dim: c.projection_dim,
    vocab_size: c.vocab_size,
  });
  const unet = {
    ...sd.unet,
    ...net.unet,
    addition_embed_type_num_heads: 64,
  };
  const vae = { ...sd.vae, scaling_factor: 0.13025 };
  const specialTokens = { ...sd.specialTokens, pad_token: '<|endoftext|>' };
  const specialTokens2 = sd.specialTokens;
  return {
    modelIndex,
    scheduler,
    textEncoder: encoderJson(net.textEncoder, 'CLIPTextModel'),
    textEncoder2: encoderJson(net.textEncoder2, 'CLIPTextModelWithProjection'),
    unet,
    vae,
    specialTokens,
    tokenizerConfig: { ...sd.tokenizerConfig, ...specialTokens },
    specialTokens2,
    tokenizerConfig2: { ...sd.tokenizerConfig, ...specialTokens2 },
  };
}
