import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, extname, join } from 'node:path';
import { modelsDir } from '@tiffin/core/internal';
import { controlNetWeightSpecs } from '../architectures/controlnet.js';
import { type ControlNetConfig, controlNetConfigFrom } from '../architectures/controlnet-config.js';
import { sdReferenceConfigs } from '../families/pipelines.js';
import { SafetensorsFile } from '../weights/safetensors.js';
import { assertNotPickle, SingleFileError } from './checkpoint-error.js';
import { UNET, unetLdmKey } from './ldm-keys.js';
import { writeComponent } from './write-component.js';

/** lllyasviel's ControlNet files: the UNet's encoder in LDM names under this prefix, plus the hint and zero convs. */
const CONTROL = 'control_model.';

/**
 * diffusers ControlNet name → key of an original ControlNet file (as diffusers' `convert_controlnet_checkpoint`
 * maps them): the encoder half as the LDM UNet (`ldm-keys.ts`), the conditioning embedding from `input_hint_block`
 * (its convs at the even indices, SiLUs between), the zero convs from `zero_convs.<k>.0` and `middle_block_out.0`.
 */
export function controlNetLdmKey(name: string, layers: number, hintConvs: number): string {
  const m = /^(.*)\.(weight|bias)$/.exec(name);
  if (!m) throw new Error(`unexpected ControlNet weight ${name}`);
  const [, module, param] = m;
  if (module === 'controlnet_cond_embedding.conv_in') return `${CONTROL}input_hint_block.0.${param}`;
  if (module === 'controlnet_cond_embedding.conv_out')
    return `${CONTROL}input_hint_block.${2 * (hintConvs - 1)}.${param}`;
  let d = /^controlnet_cond_embedding\.blocks\.(\d+)$/.exec(module);
  if (d) return `${CONTROL}input_hint_block.${2 * (Number(d[1]) + 1)}.${param}`;
  d = /^controlnet_down_blocks\.(\d+)$/.exec(module);
  if (d) return `${CONTROL}zero_convs.${d[1]}.0.${param}`;
  if (module === 'controlnet_mid_block') return `${CONTROL}middle_block_out.0.${param}`;
  return CONTROL + unetLdmKey(name, layers, () => false).slice(UNET.length);
}

/**
 * The ControlNet config of an SD 1.x/2.x original file, read off its shapes: widths, resnets and attention per level,
 * the hint block's widths; the heads as SD's (8 per block for a 768-wide context, 64 features a head for SD 2.x's
 * 1024, which also projects linearly), since shapes do not tell them.
 */
function inferControlNetConfig(f: SafetensorsFile): ControlNetConfig {
  const file = basename(f.path);
  const has = (k: string) => f.entries.has(CONTROL + k);
  const shape = (k: string) => {
    if (!has(k))
      throw new SingleFileError(
        `${file} is not a ControlNet in the original layout (no ${CONTROL}${k}): give a diffusers ControlNetModel folder`,
      );
    return f.entry(CONTROL + k).shape;
  };
  const C0 = shape('input_blocks.0.0.weight')[0];
  const channels: number[] = [];
  const layers: number[] = [];
  const attention: boolean[] = [];
  let count = 0;
  let attn = false;
  for (
    let k = 1;
    has(`input_blocks.${k}.0.in_layers.2.weight`) || has(`input_blocks.${k}.0.op.weight`);
    k++
  ) {
    if (has(`input_blocks.${k}.0.op.weight`)) {
      layers.push(count);
      attention.push(attn);
      count = 0;
      attn = false;
      continue;
    }
    if (count === 0) channels.push(shape(`input_blocks.${k}.0.in_layers.2.weight`)[0]);
    attn ||= has(`input_blocks.${k}.1.proj_in.weight`);
    count++;
  }
  layers.push(count);
  attention.push(attn);
  if (channels.length !== layers.length || new Set(layers).size !== 1 || channels[0] !== C0)
    throw new SingleFileError(
      `${file}: its input blocks are not a ControlNet's encoder (one resnet count per level)`,
    );
  const first = attention.indexOf(true);
  if (first < 0) throw new SingleFileError(`${file}: a ControlNet without cross-attention`);
  const k1 = 1 + first * (layers[0] + 1);
  const cross = shape(`input_blocks.${k1}.1.transformer_blocks.0.attn2.to_k.weight`)[1];
  const sd2 = cross === 1024;
  const widths: number[] = [];
  for (let k = 0; has(`input_hint_block.${k}.weight`); k += 2)
    widths.push(shape(`input_hint_block.${k}.weight`)[0]);
  // conv_in, then (conv, strided conv) per width step, then conv_out: the distinct widths, in order.
  const hint = [widths[0], ...widths.slice(1, -1).filter((_, k) => k % 2 === 1)];
  const ref = sdReferenceConfigs(sd2 ? 'sd2' : 'sd1').unet as unknown as Record<string, unknown>;
  return controlNetConfigFrom(ref, {
    block_out_channels: channels,
    layers_per_block: layers[0],
    down_block_types: attention.map((a) => (a ? 'CrossAttnDownBlock2D' : 'DownBlock2D')),
    cross_attention_dim: cross,
    attention_head_dim: sd2 ? channels.map((c) => c / 64) : 8,
    use_linear_projection: shape(`input_blocks.${k1}.1.proj_in.weight`).length === 2,
    mid_block_type: has('middle_block.1.proj_in.weight') ? 'UNetMidBlock2DCrossAttn' : 'UNetMidBlock2D',
    conditioning_embedding_out_channels: hint,
  });
}

/**
 * The diffusers folder for a single-file ControlNet (lllyasviel's `control_v11*.safetensors`, `control_model.*`
 * names): converted once beside the model store (tensors copied byte for byte), reused while the file is unchanged.
 */
export function controlNetSingleFileToDiffusers(path: string, cacheDir?: string): string {
  assertNotPickle(path);
  if (extname(path).toLowerCase() !== '.safetensors')
    throw new SingleFileError(`${basename(path)}: a single-file ControlNet must be a .safetensors file`);
  const st = statSync(path);
  const hash = createHash('sha256')
    .update(JSON.stringify({ v: 1, path, size: st.size, mtime: st.mtimeMs }))
    .digest('hex')
    .slice(0, 20);
  const root = cacheDir ?? join(modelsDir(), '.single-file');
  const dir = join(root, `${basename(path, extname(path))}-controlnet-${hash}`.replace(/[^\w.-]/g, '_'));
  if (existsSync(join(dir, 'config.json'))) return dir;
  const f = SafetensorsFile.open(path);
  const tmp = `${dir}.tmp-${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  try {
    const config = inferControlNetConfig(f);
    mkdirSync(tmp, { recursive: true });
    writeFileSync(join(tmp, 'config.json'), `${JSON.stringify(config, null, 2)}\n`);
    const hintConvs = 2 * (config.conditioning_embedding_out_channels?.length ?? 4);
    writeComponent(
      f,
      join(tmp, 'diffusion_pytorch_model.safetensors'),
      controlNetWeightSpecs(config),
      (name) => ({
        key: controlNetLdmKey(name, config.layers_per_block as number, hintConvs),
      }),
    );
    rmSync(dir, { recursive: true, force: true });
    renameSync(tmp, dir);
    return dir;
  } catch (e) {
    rmSync(tmp, { recursive: true, force: true });
    throw e;
  } finally {
    f.close();
  }
}
