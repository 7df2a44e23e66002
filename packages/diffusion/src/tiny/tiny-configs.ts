import { type PipelineFlavour, type SdFlavour, sdReferenceConfigs } from '../families/pipelines.js';

/**
 * The spec-11 tiny pipeline configurations, flavours "sd1" and "sd2" ("sdxl": sdxl-tiny-configs.ts): the real
 * family's reference configs (`families/pipelines.ts`) at tiny widths, depths and vocabulary.
 */

/** The tiny SD 1.x / 2.x flavours (one text encoder). */
export type TinySdFlavour = SdFlavour;
/** Every tiny pipeline flavour writeTinyPipeline can write. */
export type TinyFlavour = PipelineFlavour;

export function tinyConfigs(flavour: TinySdFlavour) {
  const sd2 = flavour === 'sd2';
  const ref = sdReferenceConfigs(flavour);
  // The tiny tokenizer (tiny-tokenizer.ts: 569 entries, BOS 567, EOS 568) in a 1000-row embedding.
  const textEncoder = {
    ...ref.textEncoder,
    bos_token_id: 567,
    eos_token_id: 568,
    hidden_size: 32,
    intermediate_size: 37,
    num_attention_heads: 4,
    num_hidden_layers: 2,
    pad_token_id: sd2 ? 0 : 568,
    projection_dim: 32,
    vocab_size: 1000,
  };
  const unet = {
    ...ref.unet,
    attention_head_dim: sd2 ? [2, 4] : 8,
    block_out_channels: [32, 64],
    cross_attention_dim: 32,
    down_block_types: ['DownBlock2D', 'CrossAttnDownBlock2D'],
    sample_size: 16,
    up_block_types: ['CrossAttnUpBlock2D', 'UpBlock2D'],
  };
  const vae = {
    ...ref.vae,
    block_out_channels: [32, 64],
    down_block_types: ['DownEncoderBlock2D', 'DownEncoderBlock2D'],
    layers_per_block: 1,
    sample_size: 32,
    up_block_types: ['UpDecoderBlock2D', 'UpDecoderBlock2D'],
  };
  const { modelIndex, scheduler, specialTokens, tokenizerConfig } = ref;
  return { modelIndex, scheduler, textEncoder, unet, vae, specialTokens, tokenizerConfig };
}
