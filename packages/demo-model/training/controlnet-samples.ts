/**
 * Writes the README's ControlNet samples, the example of docs/diffusion-service.md "ControlNet" through the library:
 * a picture the demo draws ("a large blue square at the bottom right on a black background", seed 3), its Canny
 * map (`cannyEdges`, what `module: "canny"` computes), and "a large red circle in the centre on a white background"
 * (seed 1) with and without that map guiding it. 64×64 PNG.
 * Run: npx tsx --conditions=source training/controlnet-samples.ts
 */
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type RgbImage, StableDiffusionPipeline } from '@tiffin/diffusion';
import { cannyEdges } from '@tiffin/diffusion/testing';
import sharp from 'sharp';
import { demoControlNetDir, demoModelDir } from '../src/index.js';

const out = join(dirname(fileURLToPath(import.meta.url)), '../samples');
const pipe = await StableDiffusionPipeline.fromPretrained(demoModelDir(), {
  controlnets: { canny: demoControlNetDir() },
  log: () => {},
});
const png = async (name: string, img: RgbImage) => {
  const data = Buffer.from(img.data as Uint8Array);
  const file = await sharp(data, { raw: { width: img.width, height: img.height, channels: 3 } })
    .png()
    .toBuffer();
  writeFileSync(join(out, `controlnet-${name}.png`), file);
  process.stdout.write(`controlnet-${name}.png\n`);
};
const draw = async (prompt: string, seed: number, map?: RgbImage) =>
  (
    await pipe.text2img({
      prompt,
      seed,
      ...(map ? { controlnet: [{ model: 'canny', image: map }] } : {}),
    })
  ).images[0]!;

const source = await draw('a large blue square at the bottom right on a black background', 3);
const edges = cannyEdges({ width: source.width, height: source.height, data: source.data as Uint8Array });
const prompt = 'a large red circle in the centre on a white background';
await png('source', source);
await png('edges', edges);
await png('plain', await draw(prompt, 1));
await png('guided', await draw(prompt, 1, edges));
pipe.dispose();
