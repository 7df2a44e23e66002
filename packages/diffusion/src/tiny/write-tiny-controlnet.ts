import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { controlNetWeightSpecs } from '../architectures/controlnet.js';
import { type ControlNetConfig, controlNetConfigFrom } from '../architectures/controlnet-config.js';
import { detWeight } from '../weights/deterministic.js';
import { type TensorToWrite, writeSafetensors } from '../weights/safetensors.js';
import { sdxlTinyFolderConfigs } from './sdxl-tiny-configs.js';
import { type TinyFlavour, tinyConfigs } from './tiny-configs.js';

export interface WriteTinyControlNetOptions {
  /** The tiny pipeline flavour whose UNet it fits (default `sd1`; `sdxl`: a `text_time` net). */
  flavour?: TinyFlavour;
  /** Names another set of deterministic weights (a second ControlNet); default `a`. */
  seed?: string;
}

/**
 * The ControlNet config matching a tiny pipeline's UNet (`tiny-configs.ts`): its encoder half, and a conditioning
 * embedding that downsamples ×2 (the tiny VAE's factor) through widths 8 and 16.
 */
export function tinyControlNetConfig(flavour: TinyFlavour = 'sd1'): ControlNetConfig {
  const unet = flavour === 'sdxl' ? sdxlTinyFolderConfigs().unet : tinyConfigs(flavour).unet;
  return controlNetConfigFrom(unet, {
    conditioning_channels: 3,
    conditioning_embedding_out_channels: [8, 16],
    controlnet_conditioning_channel_order: 'rgb',
    global_pool_conditions: false,
  });
}

/**
 * Write a tiny deterministic ControlNet in diffusers' `ControlNetModel` layout (`config.json`,
 * `diffusion_pytorch_model.safetensors`, weights `detWeight("controlnet/<seed>/<name>")` in F32: the zero convs are
 * not zero, so its residuals change the image) for the tiny pipeline of `flavour`. Returns `dir`.
 */
export function writeTinyControlNet(dir: string, options: WriteTinyControlNetOptions = {}): string {
  const config = tinyControlNetConfig(options.flavour ?? 'sd1');
  const seed = options.seed ?? 'a';
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'config.json'), `${JSON.stringify(config, null, 2)}\n`);
  const tensors: Record<string, TensorToWrite> = {};
  for (const s of controlNetWeightSpecs(config))
    tensors[s.name] = {
      shape: s.shape,
      data: detWeight(`controlnet/${seed}/${s.name}`, s.shape),
      dtype: 'F32',
    };
  writeSafetensors(join(dir, 'diffusion_pytorch_model.safetensors'), tensors);
  return dir;
}
