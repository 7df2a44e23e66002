/**
 * Writes Tiffin's outputs for a fixed input (text encoder, UNet, VAE decoder) so `train.py parity` can
 * compare them with the torch modules. Run (from packages/demo-model), for each backend (onnxruntime, cpu):
 *   TIFFIN_TF_BACKEND=onnxruntime npx tsx --conditions=source training/parity.ts model training/.cache/parity.json
 *   /usr/bin/python3 training/train.py parity --out model --parity-json training/.cache/parity.json
 */
import { writeFileSync } from 'node:fs';
import { StableDiffusionPipeline } from '@tiffin/diffusion';

const [folder, out] = process.argv.slice(2);
const pipe = await StableDiffusionPipeline.fromPretrained(folder);
const prompt = 'a small red circle at the top left on a white background';
const ids = pipe.tokenizer.encode(prompt);
const ctx = await pipe.encodePrompt(prompt);
// A deterministic NHWC input: the first 1 024 values of the prompt's embeddings.
const sample = ctx
  .reshape([-1])
  .slice([0], [16 * 16 * 4])
  .reshape([1, 16, 16, 4]) as Parameters<typeof pipe.vae.decode>[0];
const pred = await pipe.unet.predict(sample, 500, ctx);
const img = await pipe.vae.decode(sample);
writeFileSync(
  out,
  JSON.stringify({
    ids,
    context: Array.from(await ctx.data()),
    sample: Array.from(await sample.data()),
    unet: Array.from(await pred.data()),
    vae: Array.from(await img.data()),
  }),
);
