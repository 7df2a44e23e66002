/**
 * Writes the demo's two extras, computed (not trained) from the shipped weights and the fixed latent space, so
 * they are exact and the same on every run (sizes and sha256 in the README, "Extras"):
 *
 * - `loras/swap-red-blue.safetensors`, a LoRA (kohya layout) on the UNet's `conv_in` and `conv_out` that makes
 *   the UNet P∘UNet∘P, with P the exchange of the latent's R and B channels (u = e_R − e_B, P = I − u·uᵀ): on
 *   `conv_out` ΔW = −u·(uᵀW) (rank 1) swaps its R and B output rows, on `conv_in` ΔW = −(W·u)·uᵀ (one rank per
 *   kernel tap, 9) swaps its R and B input columns. The model then draws what it always drew with red and blue
 *   exchanged: red shapes come out blue, blue ones red, yellow (R+G) cyan; white, black and grey stay. Only
 *   `conv_out`'s bias is not swapped (a LoRA has none; its R and B entries differ by 0.009).
 * - `vae-tiny/`, a tiny decoder in diffusers' `AutoencoderTiny` layout (TAESD's architecture at width 3): the
 *   latent's first three channels are the mean colour of each 4×4 pixel cell in [-1, 1] (`train.py`,
 *   `fixed_latents`), so it undoes the soft clamp, maps them to [0, 1], copies them through two nearest ×2
 *   upsamples (identity convolutions; every block's convolutions zero, so each block is the identity on
 *   non-negative values) and out: a 64×64 mosaic of 16×16 cells, a preview-grade decode in a few kilobytes.
 *
 * Run from this package: npx tsx --conditions=source training/write-extras.ts
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SafetensorsFile, type TensorToWrite, writeSafetensors } from '@tiffin/diffusion/testing';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const R = 0;
const B = 2;

function writeLora(): string {
  const unet = SafetensorsFile.open(join(root, 'model/unet/diffusion_pytorch_model.safetensors'));
  const convIn = { shape: unet.entry('conv_in.weight').shape, data: unet.readFloat32('conv_in.weight') };
  const convOut = { shape: unet.entry('conv_out.weight').shape, data: unet.readFloat32('conv_out.weight') };
  unet.close();
  const [hidden, latentsIn, kh, kw] = convIn.shape as [number, number, number, number];
  const [latentsOut, hiddenOut] = convOut.shape as [number, number];
  if (latentsIn !== 4 || latentsOut !== 4 || hiddenOut !== hidden)
    throw new Error('unexpected conv_in/conv_out shapes');
  const taps = kh * kw;
  // conv_out: ΔW = −u·(uᵀW), rank 1: down = W[R] − W[B] (a row of its input taps), up = −u.
  const row = hidden * taps;
  const outDown = new Float32Array(row);
  for (let k = 0; k < row; k++) outDown[k] = convOut.data[R * row + k]! - convOut.data[B * row + k]!;
  const outUp = new Float32Array(4);
  outUp[R] = -1;
  outUp[B] = 1;
  // conv_in: ΔW = −(W·u)·uᵀ, one rank per kernel tap t: down_t picks u at tap t, up_t = −(W[:, R, t] − W[:, B, t]).
  const inDown = new Float32Array(taps * latentsIn * taps);
  const inUp = new Float32Array(hidden * taps);
  for (let t = 0; t < taps; t++) {
    inDown[(t * latentsIn + R) * taps + t] = 1;
    inDown[(t * latentsIn + B) * taps + t] = -1;
    for (let o = 0; o < hidden; o++) {
      const at = (i: number) => convIn.data[(o * latentsIn + i) * taps + t]!;
      inUp[o * taps + t] = -(at(R) - at(B));
    }
  }
  const tensors: Record<string, TensorToWrite> = {
    'lora_unet_conv_in.lora_down.weight': { shape: [taps, latentsIn, kh, kw], data: inDown },
    'lora_unet_conv_in.lora_up.weight': { shape: [hidden, taps, 1, 1], data: inUp },
    'lora_unet_conv_in.alpha': { shape: [], data: new Float32Array([taps]) },
    'lora_unet_conv_out.lora_down.weight': { shape: [1, hidden, kh, kw], data: outDown },
    'lora_unet_conv_out.lora_up.weight': { shape: [4, 1, 1, 1], data: outUp },
    'lora_unet_conv_out.alpha': { shape: [], data: new Float32Array([1]) },
  };
  const dir = join(root, 'loras');
  mkdirSync(dir, { recursive: true });
  const path = join(dir, 'swap-red-blue.safetensors');
  writeSafetensors(path, tensors, {
    tiffin_provenance:
      'computed by training/write-extras.ts from model/unet conv_in and conv_out: the UNet sees and predicts latents with R and B exchanged',
  });
  return path;
}

function writeTinyDecoder(): string[] {
  const vae = JSON.parse(readFileSync(join(root, 'model/vae/config.json'), 'utf8')) as {
    scaling_factor: number;
  };
  const C = 3;
  const stages = 3; // 16 → 64 pixels: two ×2 upsamples, as the VAE's three blocks.
  const config = {
    _class_name: 'AutoencoderTiny',
    _diffusers_version: '0.27.2',
    act_fn: 'relu',
    decoder_block_out_channels: Array(stages).fill(C),
    encoder_block_out_channels: Array(stages).fill(C),
    force_upcast: false,
    in_channels: 3,
    latent_channels: 4,
    latent_magnitude: 3,
    latent_shift: 0.5,
    num_decoder_blocks: Array(stages).fill(1),
    num_encoder_blocks: Array(stages).fill(1),
    out_channels: 3,
    // The pipeline divides the UNet's latents by this: the same factor as the VAE's, so z is the fixed latent.
    scaling_factor: vae.scaling_factor,
    upsampling_scaling_factor: 2,
  };
  const conv = (o: number, i: number, centre: (oc: number, ic: number) => number): TensorToWrite => {
    const data = new Float32Array(o * i * 9);
    for (let oc = 0; oc < o; oc++)
      for (let ic = 0; ic < i; ic++) data[(oc * i + ic) * 9 + 4] = centre(oc, ic);
    return { shape: [o, i, 3, 3], data };
  };
  const zeros = (...shape: number[]): TensorToWrite => ({
    shape,
    data: new Float32Array(shape.reduce((a, b) => a * b, 1)),
  });
  // 3·tanh(1/3) is where the soft clamp puts z = 1: undone at ±1 (mid-tones within 1.3 %).
  const clampAtOne = 3 * Math.tanh(1 / 3);
  const tensors: Record<string, TensorToWrite> = {};
  let layer = 0;
  // layers.0: conv 4 → C with bias, (z / clamp + 1) / 2 per colour channel; layers.1: its ReLU.
  tensors[`decoder.layers.${layer}.weight`] = conv(C, 4, (o, i) => (o === i ? 0.5 / clampAtOne : 0));
  tensors[`decoder.layers.${layer}.bias`] = { shape: [C], data: new Float32Array(C).fill(0.5) };
  layer += 2;
  for (let s = 0; s < stages; s++) {
    for (const k of [0, 2, 4]) {
      tensors[`decoder.layers.${layer}.conv.${k}.weight`] = zeros(C, C, 3, 3);
      tensors[`decoder.layers.${layer}.conv.${k}.bias`] = zeros(C);
    }
    layer++;
    const last = s === stages - 1;
    if (!last) layer++; // the upsample's slot
    tensors[`decoder.layers.${layer}.weight`] = conv(C, C, (o, i) => (o === i ? 1 : 0));
    if (last) tensors[`decoder.layers.${layer}.bias`] = zeros(C);
    layer++;
  }
  const dir = join(root, 'vae-tiny');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'config.json'), `${JSON.stringify(config, null, 2)}\n`);
  const weights = join(dir, 'diffusion_pytorch_model.safetensors');
  writeSafetensors(weights, tensors);
  return [join(dir, 'config.json'), weights];
}

for (const path of [writeLora(), ...writeTinyDecoder()]) {
  const bytes = readFileSync(path);
  const sha = createHash('sha256').update(bytes).digest('hex');
  process.stdout.write(`${path.slice(root.length + 1)}  ${bytes.length} bytes  sha256 ${sha}\n`);
}
