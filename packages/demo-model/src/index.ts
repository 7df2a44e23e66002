// @tiffin/demo-model — a small text-to-image model trained by the project, shipped as a diffusers folder,
// with the words its captions use and the pixel-level reader that scores its pictures.
import { fileURLToPath } from 'node:url';

/**
 * The diffusers-format folder of the demo model (model_index.json, tokenizer, text_encoder, unet, vae,
 * scheduler). It sits beside `dist/` and `src/` in the package, so one relative URL serves both.
 */
export function demoModelDir(): string {
  return fileURLToPath(new URL('../model', import.meta.url));
}

/**
 * The folder of the LoRA files made for the demo model (`swap-red-blue.safetensors`: red and blue exchanged,
 * computed by `training/write-extras.ts`): a LoRA directory for `lora_weights` and `<lora:swap-red-blue:1>`.
 */
export function demoLoraDir(): string {
  return fileURLToPath(new URL('../loras', import.meta.url));
}

/**
 * The demo model's tiny decoder, a diffusers `AutoencoderTiny` folder (`--vae-tiny`): decodes a latent to the
 * mean colour of each 4×4 cell, for previews and `decoder: "tiny"` (computed by `training/write-extras.ts`).
 */
export function demoTinyDecoderDir(): string {
  return fileURLToPath(new URL('../vae-tiny', import.meta.url));
}

/**
 * The demo model's Canny ControlNet, a diffusers `ControlNetModel` folder trained by `training/train_controlnet.py`:
 * the edge map (`module: "canny"` of a 64×64 picture) gives the shape, its place and size; the prompt the colour
 * and background. `tiffin diffusion start demo` loads it as `canny`.
 */
export function demoControlNetDir(): string {
  return fileURLToPath(new URL('../controlnet-canny', import.meta.url));
}

export {
  BACKGROUND_NAMES,
  type BackgroundName,
  COLOUR_NAMES,
  type ColourName,
  caption,
  POSITION_NAMES,
  type PositionName,
  type SceneSpec,
  SHAPES,
  type ShapeName,
  SIZE_NAMES,
  type SizeName,
} from './dataset/attributes.js';
export type { RgbPixels } from './dataset/render.js';
export { readScene, type SceneReading } from './evaluate/read-scene.js';
