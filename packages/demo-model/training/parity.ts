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
// A deterministic NHWC input: the first 1 024 values of the prompt's embeddings (host float32 arrays, as the
// pipeline hands them to either engine).
const sample = { data: ctx.data.slice(0, 16 * 16 * 4), shape: [1, 16, 16, 4] };
const pred = await pipe.unet.predictOnHost(sample, 500, ctx);
const img = await pipe.vae.decodeOnHost(sample);
writeFileSync(
  out,
  JSON.stringify({
    ids,
    context: Array.from(ctx.data),
    sample: Array.from(sample.data),
    unet: Array.from(pred.data),
    vae: Array.from(img.data),
  }),
);
