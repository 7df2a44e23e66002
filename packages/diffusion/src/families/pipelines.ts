/**
 * The diffusers configs of the published base models, one row per pipeline flavour (docs/spec/diffusion.md §5, §10):
 * what a single-file checkpoint's folder gets where its shapes say nothing (`checkpoints/inferred-configs.ts`),
 * and what the tiny test folders (`tiny/`) shrink, never the reverse. Rows: sd1 is runwayml/stable-diffusion-v1-5,
 * sd2 stabilityai/stable-diffusion-2 (768², v-prediction), sdxl stabilityai/stable-diffusion-xl-base-1.0, at the
 * field names and defaults of diffusers 0.27. The component slots are the ones this package writes: no safety
 * checker or feature extractor, and SDXL's `add_watermarker` false, not null (null lets diffusers watermark when
 * invisible-watermark happens to be installed).
 */

/** The pipeline flavours a folder or checkpoint comes in. */
export type PipelineFlavour = 'sd1' | 'sd2' | 'sdxl';
/** The SD 1.x / 2.x flavours (one text encoder). */
export type SdFlavour = Exclude<PipelineFlavour, 'sdxl'>;

const DIFFUSERS_VERSION = '0.27.2';

const sdModelIndex = (schedulerClass: string) => ({
  _class_name: 'StableDiffusionPipeline',
  _diffusers_version: DIFFUSERS_VERSION,
  feature_extractor: [null, null],
  image_encoder: [null, null],
  requires_safety_checker: false,
  safety_checker: [null, null],
  scheduler: ['diffusers', schedulerClass],
  text_encoder: ['transformers', 'CLIPTextModel'],
  tokenizer: ['transformers', 'CLIPTokenizer'],
  unet: ['diffusers', 'UNet2DConditionModel'],
  vae: ['diffusers', 'AutoencoderKL'],
});

/** The scaled-linear schedule every flavour trains on, in the field order diffusers writes. */
const sdScheduler = (schedulerClass: string, predictionType: string) => ({
  _class_name: schedulerClass,
  _diffusers_version: DIFFUSERS_VERSION,
  beta_end: 0.012,
  beta_schedule: 'scaled_linear',
  beta_start: 0.00085,
  clip_sample: false,
  num_train_timesteps: 1000,
  prediction_type: predictionType,
  set_alpha_to_one: false,
  skip_prk_steps: true,
  steps_offset: 1,
  timestep_spacing: 'leading',
  trained_betas: null,
});

/** transformers' CLIPTextModel config (the ViT-L/14 text tower of SD 1.x). */
const CLIP_L_TEXT = {
  architectures: ['CLIPTextModel'],
  attention_dropout: 0.0,
  bos_token_id: 0,
  dropout: 0.0,
  eos_token_id: 2,
  hidden_act: 'quick_gelu',
  hidden_size: 768,
  initializer_factor: 1.0,
  initializer_range: 0.02,
  intermediate_size: 3072,
  layer_norm_eps: 1e-5,
  max_position_embeddings: 77,
  model_type: 'clip_text_model',
  num_attention_heads: 12,
  num_hidden_layers: 12,
  pad_token_id: 1,
  projection_dim: 768,
  vocab_size: 49408,
};

/** SD 1.x's UNet2DConditionModel config with every field diffusers 0.27 writes. */
const SD1_UNET = {
  _class_name: 'UNet2DConditionModel',
  _diffusers_version: DIFFUSERS_VERSION,
  act_fn: 'silu',
  addition_embed_type: null,
  addition_embed_type_num_heads: 64,
  addition_time_embed_dim: null,
  attention_head_dim: 8 as number | number[],
  attention_type: 'default',
  block_out_channels: [320, 640, 1280, 1280],
  center_input_sample: false,
  class_embed_type: null,
  class_embeddings_concat: false,
  conv_in_kernel: 3,
  conv_out_kernel: 3,
  cross_attention_dim: 768,
  cross_attention_norm: null,
  down_block_types: ['CrossAttnDownBlock2D', 'CrossAttnDownBlock2D', 'CrossAttnDownBlock2D', 'DownBlock2D'],
  downsample_padding: 1,
  dropout: 0.0,
  dual_cross_attention: false,
  encoder_hid_dim: null,
  encoder_hid_dim_type: null,
  flip_sin_to_cos: true,
  freq_shift: 0,
  in_channels: 4,
  layers_per_block: 2,
  mid_block_only_cross_attention: null,
  mid_block_scale_factor: 1,
  mid_block_type: 'UNetMidBlock2DCrossAttn',
  norm_eps: 1e-5,
  norm_num_groups: 32,
  num_attention_heads: null,
  num_class_embeds: null,
  only_cross_attention: false,
  out_channels: 4,
  projection_class_embeddings_input_dim: null,
  resnet_out_scale_factor: 1.0,
  resnet_skip_time_act: false,
  resnet_time_scale_shift: 'default',
  reverse_transformer_layers_per_block: null,
  sample_size: 64,
  time_cond_proj_dim: null,
  time_embedding_act_fn: null,
  time_embedding_dim: null,
  time_embedding_type: 'positional',
  timestep_post_act: null,
  transformer_layers_per_block: 1,
  up_block_types: ['UpBlock2D', 'CrossAttnUpBlock2D', 'CrossAttnUpBlock2D', 'CrossAttnUpBlock2D'],
  upcast_attention: false,
  use_linear_projection: false,
};

/** The KL autoencoder every flavour shares (SDXL's own weights, scaled 0.13025). */
const SD_VAE = {
  _class_name: 'AutoencoderKL',
  _diffusers_version: DIFFUSERS_VERSION,
  act_fn: 'silu',
  block_out_channels: [128, 256, 512, 512],
  down_block_types: ['DownEncoderBlock2D', 'DownEncoderBlock2D', 'DownEncoderBlock2D', 'DownEncoderBlock2D'],
  force_upcast: true,
  in_channels: 3,
  latent_channels: 4,
  latents_mean: null,
  latents_std: null,
  layers_per_block: 2,
  norm_num_groups: 32,
  out_channels: 3,
  sample_size: 512,
  scaling_factor: 0.18215,
  up_block_types: ['UpDecoderBlock2D', 'UpDecoderBlock2D', 'UpDecoderBlock2D', 'UpDecoderBlock2D'],
};

/** The CLIP tokenizer's special tokens; SD 2.x's OpenCLIP tokenizer pads with "!" (id 0). */
const specialTokens = (pad: string) => ({
  bos_token: '<|startoftext|>',
  eos_token: '<|endoftext|>',
  pad_token: pad,
  unk_token: '<|endoftext|>',
});

const tokenizerConfig = (pad: string) => ({
  ...specialTokens(pad),
  model_max_length: 77,
  do_lower_case: true,
  tokenizer_class: 'CLIPTokenizer',
  errors: 'replace',
  add_prefix_space: false,
});

/** The reference configs of an SD 1.x or 2.x pipeline (fresh objects: a caller may change its copy). */
export function sdReferenceConfigs(flavour: SdFlavour) {
  const sd2 = flavour === 'sd2';
  const schedulerClass = sd2 ? 'DDIMScheduler' : 'PNDMScheduler';
  const pad = sd2 ? '!' : '<|endoftext|>';
  return structuredClone({
    modelIndex: sdModelIndex(schedulerClass),
    scheduler: sdScheduler(schedulerClass, sd2 ? 'v_prediction' : 'epsilon'),
    // SD 2.x: OpenCLIP ViT-H/14 with its last layer dropped (diffusers conditions on the penultimate one).
    textEncoder: sd2
      ? {
          ...CLIP_L_TEXT,
          hidden_act: 'gelu',
          hidden_size: 1024,
          intermediate_size: 4096,
          num_attention_heads: 16,
          num_hidden_layers: 23,
          projection_dim: 512,
        }
      : CLIP_L_TEXT,
    unet: sd2
      ? {
          ...SD1_UNET,
          attention_head_dim: [5, 10, 20, 20],
          cross_attention_dim: 1024,
          sample_size: 96,
          use_linear_projection: true,
        }
      : SD1_UNET,
    vae: sd2 ? { ...SD_VAE, sample_size: 768 } : SD_VAE,
    specialTokens: specialTokens(pad),
    tokenizerConfig: tokenizerConfig(pad),
  });
}

/** SDXL base 1.0's folder configs around SD's component defaults (docs/spec/diffusion.md §10), fresh objects. */
export function sdxlReferenceConfigs() {
  return structuredClone({
    modelIndex: {
      _class_name: 'StableDiffusionXLPipeline',
      _diffusers_version: DIFFUSERS_VERSION,
      add_watermarker: false,
      feature_extractor: [null, null],
      force_zeros_for_empty_prompt: true,
      image_encoder: [null, null],
      scheduler: ['diffusers', 'EulerDiscreteScheduler'],
      text_encoder: ['transformers', 'CLIPTextModel'],
      text_encoder_2: ['transformers', 'CLIPTextModelWithProjection'],
      tokenizer: ['transformers', 'CLIPTokenizer'],
      tokenizer_2: ['transformers', 'CLIPTokenizer'],
      unet: ['diffusers', 'UNet2DConditionModel'],
      vae: ['diffusers', 'AutoencoderKL'],
    },
    scheduler: {
      _class_name: 'EulerDiscreteScheduler',
      _diffusers_version: DIFFUSERS_VERSION,
      beta_end: 0.012,
      beta_schedule: 'scaled_linear',
      beta_start: 0.00085,
      clip_sample: false,
      interpolation_type: 'linear',
      num_train_timesteps: 1000,
      prediction_type: 'epsilon',
      sample_max_value: 1.0,
      set_alpha_to_one: false,
      skip_prk_steps: true,
      steps_offset: 1,
      timestep_spacing: 'leading',
      trained_betas: null,
      use_karras_sigmas: false,
    },
    unet: {
      ...SD1_UNET,
      attention_head_dim: [5, 10, 20],
      block_out_channels: [320, 640, 1280],
      cross_attention_dim: 2048,
      down_block_types: ['DownBlock2D', 'CrossAttnDownBlock2D', 'CrossAttnDownBlock2D'],
      up_block_types: ['CrossAttnUpBlock2D', 'CrossAttnUpBlock2D', 'UpBlock2D'],
      transformer_layers_per_block: [1, 2, 10],
      use_linear_projection: true,
      sample_size: 128,
      addition_embed_type: 'text_time',
      addition_time_embed_dim: 256,
      projection_class_embeddings_input_dim: 2816,
    },
    vae: { ...SD_VAE, sample_size: 1024, scaling_factor: 0.13025 },
  });
}
