import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type ClipTextConfig, clipTextWeightSpecs } from '../architectures/clip-text.js';
import { unetWeightSpecs } from '../architectures/unet.js';
import { contextWidth, type UNetConfig } from '../architectures/unet-config.js';
import { type VaeConfig, vaeWeightSpecs } from '../architectures/vae.js';
import { UNET_FAMILIES, type UNetFamily, type UNetFamilyName } from '../families/unet-families.js';
import { detWeight } from '../weights/deterministic.js';
import { type TensorToWrite, writeSafetensors } from '../weights/safetensors.js';
import type { WeightSpec } from '../weights/weight-spec.js';
import { sdxlTinyFolderConfigs } from './sdxl-tiny-configs.js';
import { type TinyFlavour, tinyConfigs } from './tiny-configs.js';
import { tinyFamilyUNet } from './tiny-families.js';
import { tinyTokenizerFiles } from './tiny-tokenizer.js';

export interface WriteTinyPipelineOptions {
  flavour?: TinyFlavour;
  /** Store weights as F16 or BF16 instead of F32 (to exercise widening on load). */
  dtype?: 'F32' | 'F16' | 'BF16';
  /** The UNet's input channels: 9 writes an inpainting UNet (default: the flavour's 4). */
  unetInChannels?: number;
  /** A UNet shaped like a model family (`families/unet-families.ts`), in that family's flavour of folder. */
  unetFamily?: UNetFamilyName;
  /** Another set of the deterministic weights (a second checkpoint that draws other images); default 0. */
  weightSeed?: number;
}

function weightsFor(
  specs: readonly WeightSpec[],
  dtype: 'F32' | 'F16' | 'BF16',
  seed = 0,
): Record<string, TensorToWrite> {
  const out: Record<string, TensorToWrite> = {};
  // Seed 0 is the reference weights (docs/spec/diffusion.md §11.3); another seed draws from other names.
  const drawn = (name: string) => (seed === 0 ? name : `${seed}:${name}`);
  for (const s of specs) out[s.name] = { shape: s.shape, data: detWeight(drawn(s.name), s.shape), dtype };
  return out;
}

/** The JSON side of a diffusers folder (index, component configs, tokenizer files) for the tiny tokenizer. */
export interface PipelineFolderJson {
  modelIndex: unknown;
  scheduler: unknown;
  textEncoder: unknown;
  unet: unknown;
  vae: unknown;
  specialTokens: unknown;
  tokenizerConfig: unknown;
  /** SDXL's second encoder (CLIPTextModelWithProjection) and tokenizer. */
  textEncoder2?: unknown;
  specialTokens2?: unknown;
  tokenizerConfig2?: unknown;
}

/** Write the configs and the tiny tokenizer of a pipeline folder; the weights are the caller's. */
export function writePipelineConfigs(dir: string, c: PipelineFolderJson): void {
  const json = (rel: string, value: unknown) => {
    const path = join(dir, rel);
    mkdirSync(join(path, '..'), { recursive: true });
    writeFileSync(path, `${JSON.stringify(value, null, 2)}\n`);
  };
  json('model_index.json', c.modelIndex);
  json('scheduler/scheduler_config.json', c.scheduler);
  json('text_encoder/config.json', c.textEncoder);
  json('unet/config.json', c.unet);
  json('vae/config.json', c.vae);
  const tok = tinyTokenizerFiles();
  const tokenizer = (folder: string, specialTokens: unknown, tokenizerConfig: unknown) => {
    json(`${folder}/special_tokens_map.json`, specialTokens);
    json(`${folder}/tokenizer_config.json`, tokenizerConfig);
    json(`${folder}/vocab.json`, tok.vocab);
    writeFileSync(join(dir, folder, 'merges.txt'), `#version: 0.2\n${tok.merges.join('\n')}\n`);
  };
  tokenizer('tokenizer', c.specialTokens, c.tokenizerConfig);
  if (c.textEncoder2 !== undefined) {
    json('text_encoder_2/config.json', c.textEncoder2);
    tokenizer('tokenizer_2', c.specialTokens2, c.tokenizerConfig2);
  }
}

/**
 * Write the spec-11 tiny random-but-deterministic pipeline in diffusers layout: configs,
 * tokenizer files and safetensors weights (about 8 MB of f32; "sdxl" adds text_encoder_2 and tokenizer_2).
 */
export function writeTinyPipeline(dir: string, options: WriteTinyPipelineOptions = {}): string {
  const family = options.unetFamily;
  const flavour = family ? UNET_FAMILIES[family].flavour : (options.flavour ?? 'sd1');
  const dtype = options.dtype ?? 'F32';
  const seed = options.weightSeed ?? 0;
  const base = flavour === 'sdxl' ? sdxlTinyFolderConfigs() : tinyConfigs(flavour);
  const unet: Record<string, unknown> = { ...base.unet };
  if (family) Object.assign(unet, tinyFamilyUNet(family, contextWidth(base.unet as UNetConfig)));
  // An inpainting UNet takes the mask and the masked image's latents beside the latents (9 channels).
  if (options.unetInChannels !== undefined) unet.in_channels = options.unetInChannels;
  // An SDXL refiner's folder says so in its index (diffusers then builds its five-id time conditioning).
  const refiner = family && (UNET_FAMILIES[family] as UNetFamily).requiresAestheticsScore;
  const modelIndex = refiner
    ? { ...(base.modelIndex as object), requires_aesthetics_score: true }
    : base.modelIndex;
  const c = { ...base, modelIndex, unet };
  writePipelineConfigs(dir, c);
  writeSafetensors(
    join(dir, 'text_encoder/model.safetensors'),
    weightsFor(clipTextWeightSpecs(c.textEncoder as ClipTextConfig), dtype, seed),
  );
  if ('textEncoder2' in c)
    writeSafetensors(
      join(dir, 'text_encoder_2/model.safetensors'),
      weightsFor(clipTextWeightSpecs(c.textEncoder2 as ClipTextConfig, true), dtype, seed),
    );
  writeSafetensors(
    join(dir, 'unet/diffusion_pytorch_model.safetensors'),
    weightsFor(unetWeightSpecs(c.unet as unknown as UNetConfig), dtype, seed),
  );
  writeSafetensors(
    join(dir, 'vae/diffusion_pytorch_model.safetensors'),
    weightsFor(vaeWeightSpecs(c.vae as VaeConfig), dtype, seed),
  );
  return dir;
}
