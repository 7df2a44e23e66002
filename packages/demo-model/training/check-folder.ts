/**
 * Loads a trained folder with Tiffin's own pipeline and generates one picture: the check that the
 * exported names, shapes and configs match the loader (run before and during training).
 * Run: npx tsx --conditions=source training/check-folder.ts <folder> [prompt]
 */
import { StableDiffusionPipeline } from '@tiffin/diffusion';

const dir = process.argv[2];
if (!dir) throw new Error('usage: check-folder.ts <folder> [prompt]');
const prompt = process.argv[3] ?? 'a large red circle in the centre on a white background';
const pipe = await StableDiffusionPipeline.fromPretrained(dir, {
  log: (m) => process.stderr.write(`${m}\n`),
});
const t0 = performance.now();
const out = await pipe.text2img({ prompt, num_inference_steps: 20, guidance_scale: 4, seed: 1 });
const img = out.images[0];
process.stdout.write(
  `${img.width}×${img.height} in ${((performance.now() - t0) / 1000).toFixed(2)} s; corner pixel ${[...img.data.slice(0, 3)]}\n`,
);
