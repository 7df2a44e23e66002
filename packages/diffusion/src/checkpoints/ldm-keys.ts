/**
 * Where a diffusers weight of a single-file checkpoint is stored: the original LDM (CompVis / Stability) key
 * layout of SD 1.x / 2.x and Stability's SGM layout of SDXL, by component prefix.
 */

export const UNET = 'model.diffusion_model.';
export const VAE = 'first_stage_model.';
export const CLIP_L = 'cond_stage_model.transformer.';
export const OPEN_CLIP = 'cond_stage_model.model.';
/** SDXL (SGM): CLIP ViT-L in transformers' names, and OpenCLIP bigG with its projection. */
export const SGM_CLIP_L = 'conditioner.embedders.0.transformer.';
export const SGM_OPEN_CLIP = 'conditioner.embedders.1.model.';

/**
 * A diffusers weight name's source in the checkpoint: a key, optionally a row range (OpenCLIP's fused q/k/v) or
 * transposed (OpenCLIP's `text_projection` is `[in, out]`, a Linear weight `[out, in]`).
 */
export interface SourceRef {
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
