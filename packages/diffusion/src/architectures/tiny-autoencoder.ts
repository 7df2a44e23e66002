import { DeclareOps } from '../ops/declare-ops.js';
import type { Ops } from '../ops/ops.js';
import type { WeightSpec } from '../weights/weight-spec.js';

/**
 * diffusers `AutoencoderTiny` config fields (TAESD, TAESDXL: `config.json` beside
 * `diffusion_pytorch_model.safetensors`). Only the decoder is defined here: it decodes the UNet's latents in
 * place of AutoencoderKL (its `scaling_factor` is 1, so the latents go in as the UNet left them).
 */
export interface TinyAutoencoderConfig {
  _class_name?: string;
  out_channels: number;
  latent_channels: number;
  decoder_block_out_channels: number[];
  num_decoder_blocks: number[];
  upsampling_scaling_factor: number;
  act_fn: string;
  scaling_factor: number;
}

/**
 * diffusers' `AutoencoderTinyBlock` as `DecoderTiny` builds it (same channels in and out, so its skip is the
 * identity): three 3×3 convs with ReLUs between, then ReLU of the sum with the input.
 */
function tinyBlock<T>(o: Ops<T>, p: string, x: T, channels: number): T {
  let h = o.relu(o.conv2d(x, `${p}.conv.0`, channels, 3));
  h = o.relu(o.conv2d(h, `${p}.conv.2`, channels, 3));
  h = o.conv2d(h, `${p}.conv.4`, channels, 3);
  return o.relu(o.add(h, x));
}

/**
 * `DecoderTiny` (diffusers 0.27): latents soft-clamped to ±3 by `3·tanh(z/3)`, a 3×3 conv and ReLU, then per stage
 * its blocks, a nearest ×2 upsample and a bias-free 3×3 conv (the last stage: no upsample, a conv with bias to the
 * output channels); the [0, 1] result is mapped to [-1, 1]. Parameters are named by their index in diffusers'
 * `nn.Sequential` (`decoder.layers.<i>`), which is the weight files' layout.
 */
export function tinyDecode<T>(o: Ops<T>, c: TinyAutoencoderConfig, z: T): T {
  const C = c.decoder_block_out_channels;
  let layer = 0;
  const name = () => `decoder.layers.${layer++}`;
  let h = o.scale(o.tanh(o.scale(z, 1 / 3)), 3);
  h = o.conv2d(h, name(), C[0], 3);
  h = o.relu(h);
  layer++; // the ReLU's own slot in the sequence
  for (let i = 0; i < C.length; i++) {
    const last = i === C.length - 1;
    for (let j = 0; j < c.num_decoder_blocks[i]; j++) {
      const x = h;
      h = o.block(() => tinyBlock(o, name(), x, C[i]));
    }
    if (!last) {
      h = o.upsampleNearest(h);
      layer++;
    }
    h = o.conv2d(h, name(), last ? c.out_channels : C[i], 3, 1, 'symmetric', last);
  }
  return o.offset(o.scale(h, 2), -1);
}

/** 2^(stages − 1): the decoder's upsampling, which must be the pipeline VAE's. */
export function tinyDecoderScaleFactor(c: TinyAutoencoderConfig): number {
  return 2 ** (c.decoder_block_out_channels.length - 1);
}

/**
 * The config as read from a folder's `config.json`, checked: a ReLU `AutoencoderTiny` whose decoder stages all
 * have one width (diffusers' `DecoderTiny` cannot run other widths either) and upsample by 2. Missing fields take
 * diffusers' defaults (TAESD's).
 */
export function tinyAutoencoderConfig(raw: Record<string, unknown>, file: string): TinyAutoencoderConfig {
  const fail = (why: string): never => {
    throw new Error(`${file}: ${why}`);
  };
  if (raw._class_name !== undefined && raw._class_name !== 'AutoencoderTiny')
    fail(`_class_name is ${JSON.stringify(raw._class_name)}, not AutoencoderTiny`);
  const positive = (v: unknown) => Number.isInteger(v) && (v as number) > 0;
  const list = (key: string, def: number[]): number[] => {
    const v = raw[key] ?? def;
    if (!Array.isArray(v) || v.length === 0 || v.length > 8 || !v.every(positive))
      fail(`${key} must be a list of 1 to 8 positive integers`);
    return v as number[];
  };
  const int = (key: string, def: number): number => {
    const v = raw[key] ?? def;
    if (!positive(v) || (v as number) > 4096) fail(`${key} must be a positive integer`);
    return v as number;
  };
  const channels = list('decoder_block_out_channels', [64, 64, 64, 64]);
  const blocks = list('num_decoder_blocks', [3, 3, 3, 1]);
  if (blocks.length !== channels.length)
    fail('num_decoder_blocks and decoder_block_out_channels must have the same length');
  if (channels.some((ch) => ch !== channels[0]) || channels[0] > 4096)
    fail('every decoder_block_out_channels entry must be the same width');
  const act = raw.act_fn ?? 'relu';
  if (act !== 'relu') fail(`act_fn ${JSON.stringify(act)} is not supported (relu only)`);
  const scaling = raw.scaling_factor ?? 1;
  if (typeof scaling !== 'number' || !Number.isFinite(scaling) || scaling <= 0)
    fail('scaling_factor must be a positive number');
  if (int('upsampling_scaling_factor', 2) !== 2) fail('upsampling_scaling_factor must be 2');
  return {
    _class_name: 'AutoencoderTiny',
    out_channels: int('out_channels', 3),
    latent_channels: int('latent_channels', 4),
    decoder_block_out_channels: channels,
    num_decoder_blocks: blocks,
    upsampling_scaling_factor: 2,
    act_fn: 'relu',
    scaling_factor: scaling as number,
  };
}

/** The weights the tiny decoder reads (diffusers names, torch shapes), from its definition. */
export function tinyDecoderWeightSpecs(c: TinyAutoencoderConfig): WeightSpec[] {
  const o = new DeclareOps();
  tinyDecode(o, c, [1, c.latent_channels, 1, 1]);
  return o.specs();
}
