import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { PipelineFamily } from '../pipeline/parameters.js';

/**
 * The pipeline's default output size without loading it: unet `sample_size` × the VAE's scale factor
 * (2^(blocks−1)), i.e. 512 for SD1.x, 768 for SD2, 1024 for SDXL and the tiny pipeline's own size for the tiny one.
 */
export function defaultImageSize(modelDir: string): number {
  const unet = readJson(join(modelDir, 'unet', 'config.json')) as { sample_size?: number };
  const vae = readJson(join(modelDir, 'vae', 'config.json')) as { block_out_channels?: number[] };
  const sample = typeof unet.sample_size === 'number' ? unet.sample_size : 64;
  const blocks = Array.isArray(vae.block_out_channels) ? vae.block_out_channels.length : 4;
  return sample * 2 ** (blocks - 1);
}

/** The folder's pipeline family without loading it: SDXL when model_index.json names a text_encoder_2. */
export function pipelineFamily(modelDir: string): PipelineFamily {
  const index = readJson(join(modelDir, 'model_index.json')) as { text_encoder_2?: unknown };
  return Array.isArray(index.text_encoder_2) && index.text_encoder_2[1] != null ? 'sdxl' : 'sd';
}

function readJson(path: string): unknown {
  try {
    return JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new Error(`${path} is missing or not valid JSON: is this a diffusers Stable Diffusion folder?`, {
      cause: err,
    });
  }
}
