import { join } from 'node:path';
import { type ClipTextConfig, clipTextWeightSpecs } from '../architectures/clip-text.js';
import { unetWeightSpecs } from '../architectures/unet.js';
import type { UNetConfig } from '../architectures/unet-config.js';
import { type VaeConfig, vaeWeightSpecs } from '../architectures/vae.js';
import { UNET_FAMILIES, type UNetFamilyName } from '../families/unet-families.js';
import { writeSafetensorsStreamed } from '../weights/safetensors.js';
import type { WeightSpec } from '../weights/weight-spec.js';
import { tinyConfigs } from './tiny-configs.js';
import { writePipelineConfigs } from './write-tiny-pipeline.js';

/** SD1.5's component configs (runwayml/stable-diffusion-v1-5, docs/spec/diffusion.md §4–6), on the tiny pipeline's keys. */
export function sd15Configs() {
  const tiny = tinyConfigs('sd1');
  const textEncoder = {
    ...tiny.textEncoder,
    hidden_size: 768,
    intermediate_size: 3072,
    num_hidden_layers: 12,
    num_attention_heads: 12,
    projection_dim: 768,
    vocab_size: 49408,
  };
  const unet = {
    ...tiny.unet,
    sample_size: 64,
    block_out_channels: [320, 640, 1280, 1280],
    down_block_types: ['CrossAttnDownBlock2D', 'CrossAttnDownBlock2D', 'CrossAttnDownBlock2D', 'DownBlock2D'],
    up_block_types: ['UpBlock2D', 'CrossAttnUpBlock2D', 'CrossAttnUpBlock2D', 'CrossAttnUpBlock2D'],
    cross_attention_dim: 768,
    attention_head_dim: 8,
  };
  const vae = {
    ...tiny.vae,
    block_out_channels: [128, 256, 512, 512],
    layers_per_block: 2,
    sample_size: 512,
  };
  return { ...tiny, textEncoder, unet, vae };
}

export interface RandomPipelineOptions {
  /** Stored dtype (default F16, as SD1.5 is usually shared: 2.1 GB instead of 4.3 GB). */
  dtype?: 'F32' | 'F16';
  seed?: number;
  /** An SD 1.x model family's UNet (`families/unet-families.ts`, e.g. `bk-sdm-tiny`) at its published size. */
  unetFamily?: UNetFamilyName;
}

/**
 * A writer of random weights (uniform, variance 1/fan_in; norm scales 1, biases 0) for load, memory and speed tests,
 * streamed to disk one tensor at a time. One xorshift state runs through every file the writer writes.
 */
export function randomWeightsWriter(
  seed = 0x2545f491,
): (path: string, specs: readonly WeightSpec[], dtype: 'F32' | 'F16') => void {
  let x = seed;
  return (path, specs, dtype) => {
    const byName = new Map(specs.map((s) => [s.name, s]));
    writeSafetensorsStreamed(path, specs, dtype, (name) => {
      const s = byName.get(name) as WeightSpec;
      const n = s.shape.reduce((a, b) => a * b, 1);
      const data = new Float32Array(n);
      if (s.shape.length >= 2) {
        const k = Math.sqrt(3 / (n / s.shape[0])) / 2 ** 31;
        for (let i = 0; i < n; i++) {
          x ^= x << 13;
          x ^= x >>> 17;
          x ^= x << 5;
          data[i] = (x | 0) * k;
        }
      } else if (!name.endsWith('.bias')) data.fill(1);
      return data;
    });
  };
}

/**
 * Writes an SD1.5-shaped diffusers folder with random weights ({@link randomWeightsWriter}). The tokenizer is the
 * tiny pipeline's (its ids are valid rows of the 49408-entry embedding).
 */
export function writeSd15RandomPipeline(dir: string, options: RandomPipelineOptions = {}): string {
  const dtype = options.dtype ?? 'F16';
  const write = randomWeightsWriter(options.seed);
  const base = sd15Configs();
  const family = options.unetFamily;
  if (family && UNET_FAMILIES[family].flavour !== 'sd1')
    throw new Error(`${family} is not an SD 1.x family (${UNET_FAMILIES[family].flavour})`);
  const c = family ? { ...base, unet: { ...base.unet, ...UNET_FAMILIES[family].unet } } : base;
  writePipelineConfigs(dir, c);
  write(
    join(dir, 'text_encoder/model.safetensors'),
    clipTextWeightSpecs(c.textEncoder as ClipTextConfig),
    dtype,
  );
  write(
    join(dir, 'unet/diffusion_pytorch_model.safetensors'),
    unetWeightSpecs(c.unet as unknown as UNetConfig),
    dtype,
  );
  write(join(dir, 'vae/diffusion_pytorch_model.safetensors'), vaeWeightSpecs(c.vae as VaeConfig), dtype);
  return dir;
}
