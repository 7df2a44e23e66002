import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, extname, join } from 'node:path';
import { modelsDir } from '@tiffin/core/internal';
import { type ClipTextConfig, clipTextWeightSpecs } from '../architectures/clip-text.js';
import { unetWeightSpecs } from '../architectures/unet.js';
import { vaeWeightSpecs } from '../architectures/vae.js';
import { readJson } from '../weights/folder.js';
import { SafetensorsFile } from '../weights/safetensors.js';
import { assertNotPickle, SingleFileError } from './checkpoint-error.js';
import { configsFromFolder, inferConfigs } from './inferred-configs.js';
import {
  CLIP_L,
  OPEN_CLIP,
  openClipRef,
  SGM_CLIP_L,
  SGM_OPEN_CLIP,
  type SourceRef,
  unetLdmKey,
  vaeLdmKey,
} from './ldm-keys.js';
import { writeComponent } from './write-component.js';

export { SingleFileError } from './checkpoint-error.js';

/**
 * Single-file SD 1.x / 2.x checkpoints in the original LDM (CompVis / Stability) key layout, and SDXL ones in
 * Stability's SGM layout, as shared on model hubs: mapped to the diffusers layout, the component configs inferred
 * from the tensor shapes (or taken from a diffusers folder), and written once as a diffusers folder beside the model
 * store, so every engine loads it like any other folder. Tensors are copied byte for byte (F16 stays F16); only
 * OpenCLIP's fused q/k/v rows are split and SDXL's `text_projection` is transposed. The parts are in `single-file/`:
 * the key mapping (`ldm-keys.ts`), the configs (`inferred-configs.ts`) and the tensor copy (`write-component.ts`).
 */

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
      // Inferred from an SD checkpoint: one layer count for every block.
      const n = c.unet.layers_per_block as number;
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
