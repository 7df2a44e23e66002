// Child process of onnx-without-tfjs.test.ts (and a plain process for comparison): text2img and img2img with a
// LoRA (fused and unfused) on the folder in argv[2] with the engine in argv[3], the LoRA file in argv[4];
// prints each image's sha256, and whether any @tensorflow module was loaded (also through require), as JSON on the
// last line.
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import type { BackendName } from '../../../src/backend.js';
import { readLoraFile } from '../../../src/lora/index.js';
import { StableDiffusionPipeline } from '../../../src/pipeline/pipeline.js';

const [dir, engine, loraPath] = process.argv.slice(2) as [string, BackendName, string];
const pipe = await StableDiffusionPipeline.fromPretrained(dir, {
  backend: engine,
  onnx: { cacheDir: `${dir}/.graphs` },
  log: () => {},
});
const file = readLoraFile(loraPath);
const hash = (data: Uint8Array) => createHash('sha256').update(data).digest('hex').slice(0, 16);
const common = { prompt: 'a red circle', height: 32, width: 32, num_inference_steps: 3, seed: 7 };
const out: Record<string, string> = {};
try {
  const plain = await pipe.text2img({ ...common, guidance_scale: 7.5 });
  out.text2img = hash(plain.images[0].data);
  const fused = await pipe.text2img({ ...common, scheduler: 'euler_a', lora: { file, scale: 0.8 } });
  out.text2imgEulerAFusedLora = hash(fused.images[0].data);
  const image = { width: 32, height: 32, data: plain.images[0].data };
  const img2img = await pipe.img2img({
    ...common,
    image,
    strength: 0.7,
    guidance_rescale: 0.5,
    lora: { file, mode: 'unfused' },
  });
  out.img2imgUnfusedLora = hash(img2img.images[0].data);
} finally {
  pipe.dispose();
}
const loaded = Object.keys(createRequire(import.meta.url).cache).filter((p) => p.includes('@tensorflow'));
console.log(JSON.stringify({ images: out, tfjsModulesLoaded: loaded.length }));
