import { basename, join } from 'node:path';
import type { ClipTextConfig } from '../architectures/clip-text.js';
import type { UNetConfig } from '../architectures/unet-config.js';
import type { VaeConfig } from '../architectures/vae.js';
import { type PipelineFlavour, sdReferenceConfigs, sdxlReferenceConfigs } from '../families/pipelines.js';
import { readJson } from '../weights/folder.js';
import type { SafetensorsFile } from '../weights/safetensors.js';
import { SingleFileError } from './checkpoint-error.js';
import { CLIP_L, OPEN_CLIP, SGM_CLIP_L, SGM_OPEN_CLIP, UNET, VAE } from './ldm-keys.js';

/** The diffusers configs of a single-file checkpoint: read off its tensor shapes, or taken from a diffusers folder. */
export interface Inferred {
  flavour: PipelineFlavour;
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
export function configsFromFolder(f: SafetensorsFile, dir: string): Inferred {
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
    ...sdReferenceConfigs('sd2').textEncoder,
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
    ...sdReferenceConfigs('sd1').textEncoder,
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

export function inferConfigs(f: SafetensorsFile, predictionType: string): Inferred {
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
  const { modelIndex, scheduler } = sdReferenceConfigs(flavour);
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
  const folder = sdxlReferenceConfigs();
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
  // What shapes do not tell is the same in every flavour's reference row.
  const ref = sdReferenceConfigs('sd1');
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
    ...ref.unet,
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
    ...ref.vae,
    block_out_channels: vaeC,
    down_block_types: vaeC.map(() => 'DownEncoderBlock2D'),
    up_block_types: vaeC.map(() => 'UpDecoderBlock2D'),
    layers_per_block: vaeResnets,
  };
  return { unet, vae };
}
