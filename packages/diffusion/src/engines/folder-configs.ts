import { join } from 'node:path';
import type { ClipTextConfig } from '../architectures/clip-text.js';
import { controlNetResidualChannels, downPathChannels } from '../architectures/controlnet.js';
import {
  type ControlNetConfig,
  controlNetAsUNet,
  validateControlNetConfig,
} from '../architectures/controlnet-config.js';
import { TIME_IDS } from '../architectures/timestep-embedding.js';
import {
  type TinyAutoencoderConfig,
  tinyAutoencoderConfig,
  tinyDecoderScaleFactor,
} from '../architectures/tiny-autoencoder.js';
import {
  contextWidth,
  hasTextTimeEmbedding,
  midBlockKind,
  type UNetConfig,
  validateUNetConfig,
} from '../architectures/unet-config.js';
import type { VaeConfig } from '../architectures/vae.js';
import type { SchedulerConfig } from '../schedulers/types.js';
import { ClipTokenizer } from '../tokenizer/clip-tokenizer.js';
import { ModelFolderError, type ModelIndex, readJson, readModelIndex } from '../weights/folder.js';

/** What an SDXL folder adds (docs/spec/diffusion.md §10): the second encoder, its tokenizer, the empty-negative rule. */
export interface SdxlFolderConfigs {
  te2Config: ClipTextConfig;
  tokenizer2: ClipTokenizer;
  /** model_index.json `force_zeros_for_empty_prompt` (SDXL's default true): no negative prompt → zero embeddings. */
  forceZerosForEmptyPrompt: boolean;
}

/** What a diffusers SD1/SD2/SDXL folder says about itself, before any weight is read (the same for every engine). */
export interface PipelineFolderConfigs {
  index: ModelIndex;
  teConfig: ClipTextConfig;
  unetConfig: UNetConfig;
  vaeConfig: VaeConfig;
  schedulerConfig: SchedulerConfig;
  tokenizer: ClipTokenizer;
  /** Present for an SDXL folder (a `text_encoder_2` component). */
  sdxl?: SdxlFolderConfigs;
}

/** Read and check the configs and tokenizer of a diffusers folder; errors name the file that is wrong. */
export function readPipelineFolderConfigs(dir: string): PipelineFolderConfigs {
  const index = readModelIndex(dir);
  const config = (file: string) => readJson(join(dir, file), file);
  const teConfig = config('text_encoder/config.json') as unknown as ClipTextConfig;
  const unetConfig = config('unet/config.json') as unknown as UNetConfig;
  const isSdxl = index.components.text_encoder_2?.[1] != null;
  if (hasTextTimeEmbedding(unetConfig) && !isSdxl)
    throw new ModelFolderError(
      'unet/config.json has the SDXL text_time embedding but model_index.json has no text_encoder_2 (an SDXL folder needs both encoders)',
    );
  validateUNetConfig(unetConfig, { textTime: isSdxl });
  const vaeConfig = config('vae/config.json') as unknown as VaeConfig;
  const schedulerConfig = config('scheduler/scheduler_config.json') as SchedulerConfig;
  const tokenizer = ClipTokenizer.fromFolder(join(dir, 'tokenizer'));
  const configs: PipelineFolderConfigs = {
    index,
    teConfig,
    unetConfig,
    vaeConfig,
    schedulerConfig,
    tokenizer,
  };
  if (isSdxl) {
    const te2Config = config('text_encoder_2/config.json') as unknown as ClipTextConfig;
    checkSdxlShapes(teConfig, te2Config, unetConfig);
    configs.sdxl = {
      te2Config,
      tokenizer2: ClipTokenizer.fromFolder(join(dir, 'tokenizer_2')),
      forceZerosForEmptyPrompt: index.raw.force_zeros_for_empty_prompt !== false,
    };
  }
  return configs;
}

/** The widths that must agree between SDXL's encoders and its UNet, checked before any weight is read. */
function checkSdxlShapes(te1: ClipTextConfig, te2: ClipTextConfig, unet: UNetConfig): void {
  if (!hasTextTimeEmbedding(unet))
    throw new ModelFolderError(
      'unet/config.json: an SDXL folder (text_encoder_2) needs addition_embed_type "text_time"',
    );
  const width = (c: ClipTextConfig, file: string, key: 'hidden_size' | 'projection_dim') => {
    const v = c[key];
    if (!Number.isInteger(v) || (v as number) < 1)
      throw new ModelFolderError(`${file}: ${key} must be a positive integer`);
    return v as number;
  };
  const d1 = width(te1, 'text_encoder/config.json', 'hidden_size');
  const d2 = width(te2, 'text_encoder_2/config.json', 'hidden_size');
  const pooled = width(te2, 'text_encoder_2/config.json', 'projection_dim');
  if (contextWidth(unet) !== d1 + d2)
    throw new ModelFolderError(
      `unet/config.json: cross_attention_dim ${contextWidth(unet)} is not the encoders' hidden sizes ${d1} + ${d2}`,
    );
  const timeDim = unet.addition_time_embed_dim;
  // The sinusoidal embedding of each time id splits its width in halves.
  if (!Number.isInteger(timeDim) || (timeDim as number) < 2 || (timeDim as number) % 2 !== 0)
    throw new ModelFolderError('unet/config.json: addition_time_embed_dim must be a positive even integer');
  const added = pooled + TIME_IDS * (timeDim as number);
  if (unet.projection_class_embeddings_input_dim !== added)
    throw new ModelFolderError(
      `unet/config.json: projection_class_embeddings_input_dim ${unet.projection_class_embeddings_input_dim} is not text_encoder_2's projection_dim ${pooled} + 6 × addition_time_embed_dim`,
    );
}

/**
 * The tiny autoencoder folder given beside a pipeline (`--vae-tiny`: diffusers' `AutoencoderTiny` layout, a
 * `config.json` and `diffusion_pytorch_model.safetensors`), its config checked against the pipeline's VAE.
 */
export function readTinyAutoencoderFolder(
  dir: string,
  vae: Pick<VaeConfig, 'block_out_channels' | 'latent_channels'>,
): TinyAutoencoderConfig {
  let config: TinyAutoencoderConfig;
  try {
    config = tinyAutoencoderConfig(
      readJson(join(dir, 'config.json'), 'tiny autoencoder config.json'),
      'config.json',
    );
  } catch (e) {
    if (e instanceof ModelFolderError) throw e;
    throw new ModelFolderError(`tiny autoencoder ${(e as Error).message}`);
  }
  const scale = 2 ** (vae.block_out_channels.length - 1);
  if (tinyDecoderScaleFactor(config) !== scale || config.latent_channels !== vae.latent_channels)
    throw new ModelFolderError(
      `tiny autoencoder config.json: it decodes ${config.latent_channels} latent channels ×${tinyDecoderScaleFactor(config)}, the pipeline's VAE ${vae.latent_channels} ×${scale}`,
    );
  return config;
}

/**
 * A diffusers `ControlNetModel` folder (`config.json`, `diffusion_pytorch_model.safetensors`) given beside a
 * pipeline, its config checked, and its residuals checked against the UNet's down path (`downPathChannels`).
 */
export function readControlNetFolder(
  name: string,
  dir: string,
  unet: UNetConfig,
  textTime: boolean,
): ControlNetConfig {
  let config: ControlNetConfig;
  try {
    config = validateControlNetConfig(readJson(join(dir, 'config.json'), 'config.json'), textTime);
  } catch (e) {
    throw new ModelFolderError(`controlnet "${name}": ${(e as Error).message}`);
  }
  const mine = controlNetResidualChannels(config);
  const theirs = downPathChannels(unet);
  const cross = contextWidth(controlNetAsUNet(config));
  if (mine.join() !== theirs.join() || cross !== contextWidth(unet))
    throw new ModelFolderError(
      `controlnet "${name}": its residuals [${mine.join(', ')}] (context ${cross}) do not fit this UNet's down path [${theirs.join(', ')}] (context ${contextWidth(unet)}): a ControlNet of another model family`,
    );
  if (midBlockKind(unet) === 'none')
    throw new ModelFolderError(`controlnet "${name}": this UNet has no mid block to take its residual`);
  return config;
}

/**
 * The ControlNets of `controlnets` that fit the UNet of diffusers folder `dir`, the others left out, each named to
 * `log`: a service's other checkpoints (`--models-dir`) load the ControlNets of their family and refuse the rest
 * per request, where its start model refuses any that does not fit at start.
 */
export function controlNetsFittingFolder(
  dir: string,
  controlnets: Readonly<Record<string, string>>,
  log: (message: string) => void,
): Record<string, string> {
  const entries = Object.entries(controlnets);
  if (entries.length === 0) return {};
  const index = readModelIndex(dir);
  const textTime = index.components.text_encoder_2?.[1] != null;
  const unet = readJson(join(dir, 'unet/config.json'), 'unet/config.json') as unknown as UNetConfig;
  validateUNetConfig(unet, { textTime });
  const fitting: Record<string, string> = {};
  for (const [name, folder] of entries) {
    try {
      readControlNetFolder(name, folder, unet, textTime);
      fitting[name] = folder;
    } catch (e) {
      if (!(e instanceof ModelFolderError)) throw e;
      log(`${e.message}; not loaded for this model`);
    }
  }
  return fitting;
}
