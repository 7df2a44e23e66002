import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, extname, join } from 'node:path';
import { InvalidArgument } from '@tiffin/core';
import { modelsDir } from '@tiffin/core/internal';
import { type ClipTextConfig, clipTextWeightSpecs } from '../architectures/clip-text.js';
import { unetWeightSpecs } from '../architectures/unet.js';
import type { UNetConfig } from '../architectures/unet-config.js';
import { type VaeConfig, vaeWeightSpecs } from '../architectures/vae.js';
import { sdxlTinyFolderConfigs } from '../tiny/sdxl-tiny-configs.js';
import { tinyConfigs } from '../tiny/tiny-configs.js';
import { readJson } from './folder.js';
import { SafetensorsFile } from './safetensors.js';
import type { WeightSpec } from './weight-spec.js';

/**
 * Single-file SD 1.x / 2.x checkpoints in the original LDM (CompVis / Stability) key layout, and SDXL ones in
 * Stability's SGM layout, as shared on model hubs: mapped to the diffusers layout, the component configs inferred
 * from the tensor shapes (or taken from a diffusers folder), and written once as a diffusers folder beside the model
 * store, so every engine loads it like any other folder. Tensors are copied byte for byte (F16 stays F16); only
 * OpenCLIP's fused q/k/v rows are split and SDXL's `text_projection` is transposed.
 */

const UNET = 'model.diffusion_model.';
const VAE = 'first_stage_model.';
const CLIP_L = 'cond_stage_model.transformer.';
const OPEN_CLIP = 'cond_stage_model.model.';
/** SDXL (SGM): CLIP ViT-L in transformers' names, and OpenCLIP bigG with its projection. */
const SGM_CLIP_L = 'conditioner.embedders.0.transformer.';
const SGM_OPEN_CLIP = 'conditioner.embedders.1.model.';

/** A checkpoint that cannot be used: a pickle (`code` PICKLE_REFUSED) or not an SD 1.x/2.x/XL file (BAD_CHECKPOINT). */
export class SingleFileError extends InvalidArgument {
  static override readonly code: string = 'BAD_CHECKPOINT';
}

/** `.ckpt`/`.pt`/`.pth`/`.bin` are Python pickles: unpickling runs code the file names. */
export function assertNotPickle(path: string): void {
  const ext = extname(path).toLowerCase();
  if (['.ckpt', '.pt', '.pth', '.bin'].includes(ext))
    throw new SingleFileError(
      `${basename(path)} is a Python pickle (${ext}): loading one executes code stored in the file, so Tiffin never ` +
        'opens it. Use the .safetensors version of the checkpoint (most hubs offer one), or convert it once in a sandbox.',
      { code: 'PICKLE_REFUSED' },
    );
}

/**
 * A diffusers weight name's source in the checkpoint: a key, optionally a row range (OpenCLIP's fused q/k/v) or
 * transposed (OpenCLIP's `text_projection` is `[in, out]`, a Linear weight `[out, in]`).
 */
interface SourceRef {
  key: string;
  rows?: [number, number];
  transpose?: boolean;
}

const RESNET_LDM: Record<string, string> = {
  norm1: 'in_layers.0',
  conv1: 'in_layers.2',
  time_emb_proj: 'emb_layers.1',
  norm2: 'out_layers.0',
  conv2: 'out_layers.3',
  conv_shortcut: 'skip_connection',
};

/** diffusers UNet name → LDM key (docs/spec/diffusion.md §9.1's block mapping), for `n` resnets per down block. */
export function unetLdmKey(name: string, n: number, upHasAttention: (i: number) => boolean): string {
  const fixed: Record<string, string> = {
    conv_in: 'input_blocks.0.0',
    'time_embedding.linear_1': 'time_embed.0',
    'time_embedding.linear_2': 'time_embed.2',
    conv_norm_out: 'out.0',
    conv_out: 'out.2',
    // SDXL's added text/time embedding.
    'add_embedding.linear_1': 'label_emb.0.0',
    'add_embedding.linear_2': 'label_emb.0.2',
  };
  const m = /^(.*)\.(weight|bias)$/.exec(name);
  if (!m) throw new Error(`unexpected UNet weight ${name}`);
  const [, module, param] = m;
  if (fixed[module]) return `${UNET}${fixed[module]}.${param}`;
  const resnet = (path: string) => {
    const r = /^(.*)\.(norm1|conv1|time_emb_proj|norm2|conv2|conv_shortcut)$/.exec(path);
    if (!r) throw new Error(`unexpected UNet resnet weight ${name}`);
    return `${r[1]}.${RESNET_LDM[r[2]]}`;
  };
  let d = /^down_blocks\.(\d+)\.(resnets|attentions)\.(\d+)\.(.*)$/.exec(module);
  if (d) {
    const k = 1 + Number(d[1]) * (n + 1) + Number(d[3]);
    return `${UNET}input_blocks.${k}.${d[2] === 'resnets' ? resnet(`0.${d[4]}`) : `1.${d[4]}`}.${param}`;
  }
  d = /^down_blocks\.(\d+)\.downsamplers\.0\.conv$/.exec(module);
  if (d) return `${UNET}input_blocks.${1 + Number(d[1]) * (n + 1) + n}.0.op.${param}`;
  d = /^mid_block\.(resnets|attentions)\.(\d+)\.(.*)$/.exec(module);
  if (d) {
    if (d[1] === 'attentions') return `${UNET}middle_block.1.${d[3]}.${param}`;
    return `${UNET}middle_block.${d[2] === '0' ? 0 : 2}.${resnet(`x.${d[3]}`).slice(2)}.${param}`;
  }
  d = /^up_blocks\.(\d+)\.(resnets|attentions)\.(\d+)\.(.*)$/.exec(module);
  if (d) {
    const k = Number(d[1]) * (n + 1) + Number(d[3]);
    return `${UNET}output_blocks.${k}.${d[2] === 'resnets' ? resnet(`0.${d[4]}`) : `1.${d[4]}`}.${param}`;
  }
  d = /^up_blocks\.(\d+)\.upsamplers\.0\.conv$/.exec(module);
  if (d) {
    const i = Number(d[1]);
    return `${UNET}output_blocks.${i * (n + 1) + n}.${upHasAttention(i) ? 2 : 1}.conv.${param}`;
  }
  throw new Error(`no LDM key for UNet weight ${name}`);
}

/** diffusers VAE name → LDM key (`N` resolution levels; the decoder's levels are numbered bottom-up). */
export function vaeLdmKey(name: string, N: number): string {
  let s = name
    .replace(/\.conv_norm_out\./, '.norm_out.')
    .replace(/\.mid_block\.resnets\.0\./, '.mid.block_1.')
    .replace(/\.mid_block\.resnets\.1\./, '.mid.block_2.')
    .replace(/\.conv_shortcut\./, '.nin_shortcut.');
  const attn = /\.mid_block\.attentions\.0\.(group_norm|to_q|to_k|to_v|to_out\.0)\./.exec(s);
  if (attn) {
    const ldm = { group_norm: 'norm', to_q: 'q', to_k: 'k', to_v: 'v', 'to_out.0': 'proj_out' }[attn[1]];
    s = s.replace(attn[0], `.mid.attn_1.${ldm}.`);
  }
  s = s
    .replace(/^encoder\.down_blocks\.(\d+)\.resnets\./, 'encoder.down.$1.block.')
    .replace(/^encoder\.down_blocks\.(\d+)\.downsamplers\.0\./, 'encoder.down.$1.downsample.')
    .replace(/^decoder\.up_blocks\.(\d+)\.resnets\./, (_, i) => `decoder.up.${N - 1 - Number(i)}.block.`)
    .replace(
      /^decoder\.up_blocks\.(\d+)\.upsamplers\.0\./,
      (_, i) => `decoder.up.${N - 1 - Number(i)}.upsample.`,
    );
  return `${VAE}${s}`;
}

/**
 * diffusers CLIPTextModel(WithProjection) name → OpenCLIP key (SD 2.x under `cond_stage_model.model.`, SDXL's second
 * encoder under `conditioner.embedders.1.model.`), with q/k/v as row ranges of in_proj.
 */
export function openClipRef(name: string, D: number, prefix = OPEN_CLIP): SourceRef {
  const fixed: Record<string, string> = {
    'text_model.embeddings.token_embedding.weight': 'token_embedding.weight',
    'text_model.embeddings.position_embedding.weight': 'positional_embedding',
    'text_model.final_layer_norm.weight': 'ln_final.weight',
    'text_model.final_layer_norm.bias': 'ln_final.bias',
  };
  if (fixed[name]) return { key: `${prefix}${fixed[name]}` };
  if (name === 'text_projection.weight') return { key: `${prefix}text_projection`, transpose: true };
  const m = /^text_model\.encoder\.layers\.(\d+)\.(.*)\.(weight|bias)$/.exec(name);
  if (!m) throw new Error(`no OpenCLIP key for ${name}`);
  const [, i, module, param] = m;
  const p = `${prefix}transformer.resblocks.${i}.`;
  const qkv = ['self_attn.q_proj', 'self_attn.k_proj', 'self_attn.v_proj'].indexOf(module);
  if (qkv >= 0) return { key: `${p}attn.in_proj_${param}`, rows: [qkv * D, (qkv + 1) * D] };
  const map: Record<string, string> = {
    layer_norm1: 'ln_1',
    layer_norm2: 'ln_2',
    'self_attn.out_proj': 'attn.out_proj',
    'mlp.fc1': 'mlp.c_fc',
    'mlp.fc2': 'mlp.c_proj',
  };
  if (!map[module]) throw new Error(`no OpenCLIP key for ${name}`);
  return { key: `${p}${map[module]}.${param}` };
}

export interface SingleFileOptions {
  /** A diffusers `tokenizer/` folder (default: a `tokenizer/` folder beside the checkpoint). */
  tokenizerDir?: string;
  /**
   * SDXL's second tokenizer (default: `tokenizer_2/` beside the checkpoint, else the first tokenizer padding with
   * `!`, which is what SDXL's tokenizer_2 is).
   */
  tokenizer2Dir?: string;
  /**
   * A diffusers folder of the same architecture whose configs (model_index, scheduler, component configs) and
   * tokenizers are used instead of inferring them from the shapes (diffusers' `from_single_file(config=...)`): for
   * checkpoints whose attention heads are not SD's/SDXL's (heads cannot be read off weight shapes).
   */
  configDir?: string;
  /** Default `epsilon` for SD 1.x, `v_prediction` for SD 2.x (the 768-v models). */
  predictionType?: 'epsilon' | 'v_prediction';
  /** Where converted folders are kept (default `<model store>/.single-file`). */
  cacheDir?: string;
}

interface Inferred {
  flavour: 'sd1' | 'sd2' | 'sdxl';
  modelIndex: unknown;
  scheduler: Record<string, unknown>;
  textEncoder: ClipTextConfig & Record<string, unknown>;
  /** SDXL's second encoder (CLIPTextModelWithProjection). */
  textEncoder2?: ClipTextConfig & Record<string, unknown>;
  unet: UNetConfig;
  vae: VaeConfig & Record<string, unknown>;
}

const isSdxlCheckpoint = (f: SafetensorsFile) => f.entries.has(`${SGM_OPEN_CLIP}token_embedding.weight`);

/** The configs of a diffusers folder (`configDir`), for a checkpoint of its architecture. */
function configsFromFolder(f: SafetensorsFile, dir: string): Inferred {
  const json = (rel: string) => readJson(join(dir, rel), rel) as Record<string, unknown>;
  const modelIndex = json('model_index.json');
  const sdxl = Array.isArray(modelIndex.text_encoder_2) && modelIndex.text_encoder_2[1] != null;
  if (sdxl !== isSdxlCheckpoint(f))
    throw new SingleFileError(
      `${basename(f.path)} is ${isSdxlCheckpoint(f) ? '' : 'not '}an SDXL checkpoint but ${dir} is ${sdxl ? '' : 'not '}an SDXL folder`,
    );
  return {
    flavour: sdxl ? 'sdxl' : f.entries.has(`${OPEN_CLIP}token_embedding.weight`) ? 'sd2' : 'sd1',
    modelIndex,
    scheduler: json('scheduler/scheduler_config.json'),
    textEncoder: json('text_encoder/config.json') as unknown as Inferred['textEncoder'],
    textEncoder2: sdxl
      ? (json('text_encoder_2/config.json') as unknown as Inferred['textEncoder'])
      : undefined,
    unet: json('unet/config.json') as unknown as UNetConfig,
    vae: json('vae/config.json') as unknown as Inferred['vae'],
  };
}

/** Layer count of a stack whose layer `i` has key `key(i)`. */
function countLayers(has: (k: string) => boolean, key: (i: number) => string): number {
  let n = 0;
  while (has(key(n))) n++;
  return n;
}

/** An OpenCLIP text tower's CLIPTextConfig from its shapes (`layers` of them kept, each with head size 64). */
function openClipConfig(
  f: SafetensorsFile,
  prefix: string,
  keep: (layers: number) => number,
): ClipTextConfig & Record<string, unknown> {
  const has = (k: string) => f.entries.has(k);
  const shape = (k: string) => f.entry(k).shape;
  const layers = countLayers(has, (i) => `${prefix}transformer.resblocks.${i}.ln_1.weight`);
  const [V, D] = shape(`${prefix}token_embedding.weight`);
  return {
    ...tinyConfigs('sd1').textEncoder,
    hidden_act: 'gelu',
    hidden_size: D,
    intermediate_size: shape(`${prefix}transformer.resblocks.0.mlp.c_fc.weight`)[0],
    num_hidden_layers: keep(layers),
    num_attention_heads: D / 64,
    projection_dim: has(`${prefix}text_projection`) ? shape(`${prefix}text_projection`)[1] : 512,
    vocab_size: V,
    bos_token_id: 49406,
    eos_token_id: 49407,
    pad_token_id: 1,
  };
}

/** transformers' CLIPTextModel config from its shapes under `root` (with or without `text_model.`). */
function clipLConfig(f: SafetensorsFile, root: string): ClipTextConfig & Record<string, unknown> {
  const has = (k: string) => f.entries.has(k);
  const shape = (k: string) => f.entry(k).shape;
  const prefix = has(`${root}text_model.embeddings.token_embedding.weight`) ? `${root}text_model.` : root;
  if (!has(`${prefix}embeddings.token_embedding.weight`))
    throw new SingleFileError(`${basename(f.path)}: no CLIP text encoder (${root}*) in the checkpoint`);
  const layers = countLayers(has, (i) => `${prefix}encoder.layers.${i}.layer_norm1.weight`);
  const [V, D] = shape(`${prefix}embeddings.token_embedding.weight`);
  return {
    ...tinyConfigs('sd1').textEncoder,
    hidden_act: 'quick_gelu',
    hidden_size: D,
    intermediate_size: shape(`${prefix}encoder.layers.0.mlp.fc1.weight`)[0],
    num_hidden_layers: layers,
    num_attention_heads: D / 64,
    projection_dim: D,
    vocab_size: V,
    bos_token_id: 0,
    eos_token_id: 2,
    pad_token_id: 1,
  };
}

function inferConfigs(f: SafetensorsFile, predictionType: string): Inferred {
  const has = (k: string) => f.entries.has(k);
  if (!has(`${UNET}input_blocks.0.0.weight`) || !has(`${VAE}decoder.conv_in.weight`))
    throw new SingleFileError(
      `${basename(f.path)} is not an SD 1.x/2.x/XL checkpoint in the LDM/SGM layout (no model.diffusion_model./first_stage_model. weights)`,
    );
  if (isSdxlCheckpoint(f)) return inferSdxlConfigs(f);
  const sd2 = has(`${OPEN_CLIP}token_embedding.weight`);
  // SD 2.x conditions on the penultimate OpenCLIP layer: diffusers drops the last one.
  const textEncoder = sd2 ? openClipConfig(f, OPEN_CLIP, (layers) => layers - 1) : clipLConfig(f, CLIP_L);
  const v = predictionType === 'v_prediction';
  const { unet, vae } = inferUNetVae(f, {
    // SD 1.x: 8 heads everywhere; SD 2.x: head size 64 (docs/spec/diffusion.md §5.2).
    heads: (C) => (sd2 ? C.map((c) => c / 64) : 8),
    sampleSize: sd2 && v ? 96 : 64,
  });
  const flavour = sd2 ? 'sd2' : 'sd1';
  const { modelIndex, scheduler } = tinyConfigs(flavour);
  return {
    flavour,
    modelIndex,
    scheduler,
    textEncoder,
    unet,
    vae: { ...vae, sample_size: sd2 && v ? 768 : 512 },
  };
}

/**
 * SDXL's configs from an SGM checkpoint's shapes (docs/spec/diffusion.md §10): both encoders whole (SDXL reads
 * hidden_states[-2] itself), transformer depth per level, head size 64, the added embedding's widths, VAE 0.13025.
 */
function inferSdxlConfigs(f: SafetensorsFile): Inferred {
  const shape = (k: string) => f.entry(k).shape;
  const textEncoder = clipLConfig(f, SGM_CLIP_L);
  const textEncoder2 = {
    ...openClipConfig(f, SGM_OPEN_CLIP, (layers) => layers),
    architectures: ['CLIPTextModelWithProjection'],
    bos_token_id: 0,
    eos_token_id: 2,
  };
  const labelIn = `${UNET}label_emb.0.0.weight`;
  if (!f.entries.has(labelIn))
    throw new SingleFileError(
      `${basename(f.path)}: an SDXL checkpoint without label_emb (the added embedding)`,
    );
  const added = shape(labelIn)[1];
  const timeDim = (added - (textEncoder2.projection_dim as number)) / 6;
  if (!Number.isInteger(timeDim) || timeDim < 2)
    throw new SingleFileError(
      `${basename(f.path)}: label_emb.0.0 takes ${added} inputs, not text_projection's ${textEncoder2.projection_dim} + 6 time-id embeddings`,
    );
  const { unet, vae } = inferUNetVae(f, { heads: (C) => C.map((c) => c / 64), sampleSize: 128 });
  const folder = sdxlTinyFolderConfigs();
  return {
    flavour: 'sdxl',
    modelIndex: folder.modelIndex,
    scheduler: folder.scheduler,
    textEncoder,
    textEncoder2,
    unet: {
      ...unet,
      addition_embed_type: 'text_time',
      addition_time_embed_dim: timeDim,
      projection_class_embeddings_input_dim: added,
    },
    vae: { ...vae, scaling_factor: 0.13025, sample_size: 1024 },
  };
}

/** The UNet's and VAE's configs from the LDM/SGM shapes; what shapes do not tell (heads, size) is the caller's. */
function inferUNetVae(
  f: SafetensorsFile,
  given: { heads: (C: number[]) => number | number[]; sampleSize: number },
): { unet: UNetConfig; vae: VaeConfig & Record<string, unknown> } {
  const has = (k: string) => f.entries.has(k);
  const shape = (k: string) => f.entry(k).shape;
  const tiny = tinyConfigs('sd1');
  // UNet: channels per level from each level's first resnet, n resnets per level from the block count.
  let blocks = 1;
  while (
    has(`${UNET}input_blocks.${blocks}.0.in_layers.0.weight`) ||
    has(`${UNET}input_blocks.${blocks}.0.op.weight`)
  )
    blocks++;
  // Level 0 is input_blocks 1..n, then its downsampler (`.0.op`).
  let n = 1;
  while (has(`${UNET}input_blocks.${n + 1}.0.in_layers.0.weight`)) n++;
  const N = blocks / (n + 1);
  if (!Number.isInteger(N))
    throw new SingleFileError(`${basename(f.path)}: unexpected UNet layout (${blocks} input blocks)`);
  const C = Array.from(
    { length: N },
    (_, i) => shape(`${UNET}input_blocks.${1 + i * (n + 1)}.0.out_layers.3.weight`)[0],
  );
  const cross = Array.from({ length: N }, (_, i) =>
    has(`${UNET}input_blocks.${1 + i * (n + 1)}.1.proj_in.weight`),
  );
  const firstAttn = cross.indexOf(true);
  if (firstAttn < 0) throw new SingleFileError(`${basename(f.path)}: a UNet without cross-attention`);
  // Transformer depth per level (SDXL: 1, 2, 10); 1 where a level has no attention, as diffusers writes it.
  const depth = cross.map((x, i) =>
    x
      ? countLayers(
          has,
          (j) => `${UNET}input_blocks.${1 + i * (n + 1)}.1.transformer_blocks.${j}.attn1.to_q.weight`,
        )
      : 1,
  );
  const projIn = `${UNET}input_blocks.${1 + firstAttn * (n + 1)}.1.proj_in.weight`;
  const linearProj = shape(projIn).length === 2;
  const contextDim = shape(
    `${UNET}input_blocks.${1 + firstAttn * (n + 1)}.1.transformer_blocks.0.attn2.to_k.weight`,
  )[1];
  const unet = {
    ...tiny.unet,
    block_out_channels: C,
    down_block_types: cross.map((x) => (x ? 'CrossAttnDownBlock2D' : 'DownBlock2D')),
    up_block_types: [...cross].reverse().map((x) => (x ? 'CrossAttnUpBlock2D' : 'UpBlock2D')),
    cross_attention_dim: contextDim,
    attention_head_dim: given.heads(C),
    transformer_layers_per_block: depth.every((d) => d === 1) ? 1 : depth,
    use_linear_projection: linearProj,
    sample_size: given.sampleSize,
    layers_per_block: n,
  } as unknown as UNetConfig;
  let vaeLevels = 0;
  while (has(`${VAE}encoder.down.${vaeLevels}.block.0.conv1.weight`)) vaeLevels++;
  let vaeResnets = 0;
  while (has(`${VAE}encoder.down.0.block.${vaeResnets}.conv1.weight`)) vaeResnets++;
  const vaeC = Array.from(
    { length: vaeLevels },
    (_, i) => shape(`${VAE}encoder.down.${i}.block.0.conv1.weight`)[0],
  );
  const vae = {
    ...tiny.vae,
    block_out_channels: vaeC,
    down_block_types: vaeC.map(() => 'DownEncoderBlock2D'),
    up_block_types: vaeC.map(() => 'UpDecoderBlock2D'),
    layers_per_block: vaeResnets,
  };
  return { unet, vae };
}

/** Copies the mapped tensors (raw bytes, row ranges sliced) into a diffusers-named safetensors file. */
function writeComponent(
  f: SafetensorsFile,
  out: string,
  specs: readonly WeightSpec[],
  ref: (name: string) => SourceRef,
): void {
  const header: Record<string, unknown> = {};
  const parts: { name: string; ref: SourceRef; length: number }[] = [];
  let offset = 0;
  for (const s of [...specs].sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const r = ref(s.name);
    if (!f.entries.has(r.key))
      throw new SingleFileError(
        `${basename(f.path)}: ${r.key} (for ${s.name}) is missing from the checkpoint`,
      );
    const e = f.entry(r.key);
    if (r.transpose && e.shape.length !== 2)
      throw new SingleFileError(
        `${basename(f.path)}: ${r.key} is not a matrix (shape [${e.shape.join(', ')}])`,
      );
    const bytes = e.end - e.begin;
    const length = r.rows ? (bytes / e.shape[0]) * (r.rows[1] - r.rows[0]) : bytes;
    const fileShape = r.rows
      ? [r.rows[1] - r.rows[0], ...e.shape.slice(1)]
      : r.transpose
        ? [e.shape[1], e.shape[0]]
        : e.shape;
    header[s.name] = { dtype: e.dtype, shape: fileShape, data_offsets: [offset, offset + length] };
    parts.push({ name: s.name, ref: r, length });
    offset += length;
  }
  let json = JSON.stringify(header);
  json += ' '.repeat((8 - (Buffer.byteLength(json) % 8)) % 8);
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(Buffer.byteLength(json)));
  const chunks: Buffer[] = [len, Buffer.from(json)];
  writeFileSync(out, Buffer.concat(chunks));
  for (const p of parts) {
    const all = f.readBytes(p.ref.key);
    const e = f.entry(p.ref.key);
    const rowBytes = all.length / e.shape[0];
    const slice = p.ref.rows ? all.subarray(p.ref.rows[0] * rowBytes, p.ref.rows[1] * rowBytes) : all;
    writeFileSync(out, p.ref.transpose ? transposeBytes(slice, e.shape[0], e.shape[1]) : slice, {
      flag: 'a',
    });
  }
}

/** A row-major `[rows, cols]` matrix of any element size, transposed byte for byte. */
function transposeBytes(bytes: Uint8Array, rows: number, cols: number): Uint8Array {
  const size = bytes.length / (rows * cols);
  const out = new Uint8Array(bytes.length);
  for (let r = 0; r < rows; r++)
    for (let c = 0; c < cols; c++)
      out.set(bytes.subarray((r * cols + c) * size, (r * cols + c + 1) * size), (c * rows + r) * size);
  return out;
}

/**
 * The diffusers folder for a single-file LDM checkpoint: converted on first use (configs inferred
 * from the shapes, keys mapped, tensors copied unchanged), then reused while the file is unchanged.
 */
export function singleFileToDiffusers(path: string, options: SingleFileOptions = {}): string {
  assertNotPickle(path);
  if (extname(path).toLowerCase() !== '.safetensors')
    throw new SingleFileError(`${basename(path)}: a single-file checkpoint must be a .safetensors file`);
  const besides = (folder: string) => join(options.configDir ?? dirname(path), folder);
  const tokenizerDir = options.tokenizerDir ?? besides('tokenizer');
  if (!existsSync(join(tokenizerDir, 'vocab.json')) && !existsSync(join(tokenizerDir, 'tokenizer.json')))
    throw new SingleFileError(
      `${basename(path)} carries no tokenizer: put the CLIP tokenizer files (vocab.json, merges.txt from any SD ` +
        `1.x/2.x/XL diffusers folder's tokenizer/) in ${tokenizerDir}`,
    );
  const tokenizer2Dir = options.tokenizer2Dir ?? besides('tokenizer_2');
  const st = statSync(path);
  const f = SafetensorsFile.open(path);
  try {
    const prediction =
      options.predictionType ??
      (f.entries.has(`${OPEN_CLIP}token_embedding.weight`) ? 'v_prediction' : 'epsilon');
    const hash = createHash('sha256')
      .update(
        JSON.stringify({
          v: 2,
          path,
          size: st.size,
          mtime: st.mtimeMs,
          prediction,
          tokenizerDir,
          tokenizer2Dir,
          configDir: options.configDir ?? null,
        }),
      )
      .digest('hex')
      .slice(0, 20);
    const root = options.cacheDir ?? join(modelsDir(), '.single-file');
    const dir = join(root, `${basename(path, extname(path))}-${hash}`.replace(/[^\w.-]/g, '_'));
    if (existsSync(join(dir, 'model_index.json'))) return dir;
    const c = options.configDir ? configsFromFolder(f, options.configDir) : inferConfigs(f, prediction);
    const tmp = `${dir}.tmp-${process.pid}`;
    rmSync(tmp, { recursive: true, force: true });
    try {
      const json = (rel: string, value: unknown) => {
        mkdirSync(dirname(join(tmp, rel)), { recursive: true });
        writeFileSync(join(tmp, rel), `${JSON.stringify(value, null, 2)}\n`);
      };
      json('model_index.json', c.modelIndex);
      json(
        'scheduler/scheduler_config.json',
        options.configDir ? c.scheduler : { ...c.scheduler, prediction_type: prediction },
      );
      json('text_encoder/config.json', c.textEncoder);
      json('unet/config.json', c.unet);
      json('vae/config.json', c.vae);
      cpSync(tokenizerDir, join(tmp, 'tokenizer'), { recursive: true });
      const D = c.textEncoder.hidden_size;
      if (c.flavour === 'sdxl') {
        const te2 = c.textEncoder2 as ClipTextConfig;
        json('text_encoder_2/config.json', te2);
        writeSecondTokenizer(tokenizerDir, tokenizer2Dir, join(tmp, 'tokenizer_2'));
        writeComponent(
          f,
          join(tmp, 'text_encoder/model.safetensors'),
          clipTextWeightSpecs(c.textEncoder),
          (name) => ({ key: `${SGM_CLIP_L}${name}` }),
        );
        writeComponent(
          f,
          join(tmp, 'text_encoder_2/model.safetensors'),
          clipTextWeightSpecs(te2, true),
          (name) => openClipRef(name, te2.hidden_size, SGM_OPEN_CLIP),
        );
      } else {
        // CLIP-L keys are transformers' names under cond_stage_model.transformer. (older files omit `text_model.`).
        const withTextModel = f.entries.has(`${CLIP_L}text_model.embeddings.token_embedding.weight`);
        const teRef = (name: string): SourceRef =>
          c.flavour === 'sd2'
            ? openClipRef(name, D)
            : { key: `${CLIP_L}${withTextModel ? name : name.replace(/^text_model\./, '')}` };
        writeComponent(
          f,
          join(tmp, 'text_encoder/model.safetensors'),
          clipTextWeightSpecs(c.textEncoder),
          teRef,
        );
      }
      const n = c.unet.layers_per_block;
      const upAttn = (i: number) => c.unet.up_block_types[i] === 'CrossAttnUpBlock2D';
      writeComponent(
        f,
        join(tmp, 'unet/diffusion_pytorch_model.safetensors'),
        unetWeightSpecs(c.unet),
        (name) => ({
          key: unetLdmKey(name, n, upAttn),
        }),
      );
      const N = c.vae.block_out_channels.length;
      writeComponent(
        f,
        join(tmp, 'vae/diffusion_pytorch_model.safetensors'),
        vaeWeightSpecs(c.vae),
        (name) => ({
          key: vaeLdmKey(name, N),
        }),
      );
      rmSync(dir, { recursive: true, force: true });
      renameSync(tmp, dir);
      return dir;
    } catch (e) {
      rmSync(tmp, { recursive: true, force: true });
      throw e;
    }
  } finally {
    f.close();
  }
}

/** SDXL's tokenizer_2: the given folder, else the first tokenizer padding with `!` (all SDXL's tokenizer_2 changes). */
function writeSecondTokenizer(tokenizerDir: string, tokenizer2Dir: string, out: string): void {
  if (existsSync(join(tokenizer2Dir, 'vocab.json')) || existsSync(join(tokenizer2Dir, 'tokenizer.json'))) {
    cpSync(tokenizer2Dir, out, { recursive: true });
    return;
  }
  cpSync(tokenizerDir, out, { recursive: true });
  for (const file of ['special_tokens_map.json', 'tokenizer_config.json']) {
    const path = join(out, file);
    const json = existsSync(path) ? readJson(path, `tokenizer/${file}`) : {};
    writeFileSync(path, `${JSON.stringify({ ...json, pad_token: '!' }, null, 2)}\n`);
  }
}
