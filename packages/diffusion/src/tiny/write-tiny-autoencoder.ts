import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tinyAutoencoderConfig, tinyDecoderWeightSpecs } from '../architectures/tiny-autoencoder.js';
import { detWeight } from '../weights/deterministic.js';
import { type TensorToWrite, writeSafetensors } from '../weights/safetensors.js';

/**
 * The tiny autoencoder folder the tests build (diffusers `AutoencoderTiny` layout: `config.json` and
 * `diffusion_pytorch_model.safetensors`, deterministic decoder weights): 16 channels, two stages, so it upsamples
 * ×2 like the tiny pipeline's VAE. TAESD itself has four stages of 64 channels (×8, SD's VAE).
 */
export function tinyAutoencoderFolderConfig(): Record<string, unknown> {
  return {
    _class_name: 'AutoencoderTiny',
    _diffusers_version: '0.27.2',
    act_fn: 'relu',
    decoder_block_out_channels: [16, 16],
    encoder_block_out_channels: [16, 16],
    force_upcast: false,
    in_channels: 3,
    latent_channels: 4,
    latent_magnitude: 3,
    latent_shift: 0.5,
    num_decoder_blocks: [2, 1],
    num_encoder_blocks: [1, 2],
    out_channels: 3,
    scaling_factor: 1.0,
    upsampling_scaling_factor: 2,
  };
}

/** Writes the folder above into `dir`; the decoder's weights only (decoding is all the engine does with it). */
export function writeTinyAutoencoder(dir: string, raw = tinyAutoencoderFolderConfig()): string {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'config.json'), `${JSON.stringify(raw, null, 2)}\n`);
  const tensors: Record<string, TensorToWrite> = {};
  for (const s of tinyDecoderWeightSpecs(tinyAutoencoderConfig(raw, 'config.json')))
    tensors[s.name] = { shape: s.shape, data: detWeight(s.name, s.shape), dtype: 'F32' };
  writeSafetensors(join(dir, 'diffusion_pytorch_model.safetensors'), tensors);
  return dir;
}
