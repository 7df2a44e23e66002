import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { unetWeightSpecs } from '../architectures/unet.js';
import type { UNetConfig } from '../architectures/unet-config.js';
import { randomWeightsWriter } from './sd15-random.js';
import { sdxlTinyConfigs, sdxlTinyFolderConfigs } from './sdxl-tiny-configs.js';

/** stabilityai/stable-diffusion-xl-base-1.0's unet/config.json (the fields the architecture reads). */
export function sdxlBaseUNetConfig(): UNetConfig {
  return {
    ...sdxlTinyConfigs().unet,
    sample_size: 128,
    block_out_channels: [320, 640, 1280],
    attention_head_dim: [5, 10, 20],
    transformer_layers_per_block: [1, 2, 10],
    cross_attention_dim: 2048,
    addition_time_embed_dim: 256,
    projection_class_embeddings_input_dim: 2816,
  };
}

/**
 * Writes `unet/` of an SDXL-base-shaped folder (its config in diffusers' fields, random weights from
 * randomWeightsWriter: 5.1 GB as F16, 10.3 GB as F32) for speed and memory checks; nothing it writes is committed.
 */
export function writeSdxlRandomUNet(dir: string, dtype: 'F32' | 'F16' = 'F16'): string {
  const config = { ...sdxlTinyFolderConfigs().unet, ...sdxlBaseUNetConfig() };
  mkdirSync(join(dir, 'unet'), { recursive: true });
  writeFileSync(join(dir, 'unet', 'config.json'), `${JSON.stringify(config, null, 2)}\n`);
  randomWeightsWriter()(
    join(dir, 'unet', 'diffusion_pytorch_model.safetensors'),
    unetWeightSpecs(config),
    dtype,
  );
  return dir;
}
