// @tiffin/demo-model — a small text-to-image model trained by the project, shipped as a diffusers folder.
import { fileURLToPath } from 'node:url';

/**
 * The diffusers-format folder of the demo model (model_index.json, tokenizer, text_encoder, unet, vae,
 * scheduler). It sits beside `dist/` and `src/` in the package, so one relative URL serves both.
 */
export function demoModelDir(): string {
  return fileURLToPath(new URL('../model', import.meta.url));
}
