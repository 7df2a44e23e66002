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

/** The ControlNet config of an SD 1.x/2.x original file, from its shapes (the family's reference UNet otherwise). */
function inferControlNetConfig(f: SafetensorsFile): ControlNetConfig {
  const file = basename(f.path);
  const shape = (k: string) => {
    if (!f.entries.has(CONTROL + k))
      throw new SingleFileError(
        `${file} is not a ControlNet in the original layout (no ${CONTROL}${k}): give a diffusers ControlNetModel folder`,
      );
    return f.entry(CONTROL + k).shape;
  };
  const C0 = shape('input_blocks.0.0.weight')[0];
  const cross = shape('input_blocks.1.1.transformer_blocks.0.attn2.to_k.weight')[1];
  const flavour = cross === 1024 ? 'sd2' : 'sd1';
  const ref = sdReferenceConfigs(flavour).unet as unknown as ControlNetConfig;
  if (C0 !== (ref.block_out_channels as number[])[0] || (cross !== 768 && cross !== 1024))
    throw new SingleFileError(
      `${file}: a ControlNet of ${C0} channels and context ${cross} is not SD 1.x/2.x's: give a diffusers ControlNetModel folder`,
    );
  const widths: number[] = [];
  for (let k = 0; f.entries.has(`${CONTROL}input_hint_block.${k}.weight`); k += 2)
    widths.push(f.entry(`${CONTROL}input_hint_block.${k}.weight`).shape[0]);
  // conv_in, then (conv, strided conv) per width step, then conv_out: the distinct widths, in order.
  const hint = [widths[0], ...widths.slice(1, -1).filter((_, k) => k % 2 === 1)];
  return controlNetConfigFrom(ref as unknown as Record<string, unknown>, {
    conditioning_embedding_out_channels: hint,
    use_linear_projection: shape('input_blocks.1.1.proj_in.weight').length === 2,
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
