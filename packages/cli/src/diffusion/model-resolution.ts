import { CLIException } from '@tiffin/core/internal';
import { demoControlNetDir, demoLoraDir, demoModelDir, demoTinyDecoderDir } from '@tiffin/demo-model';
import {
  DEFAULT_MODEL_ID,
  DEFAULT_SDXL_MODEL_ID,
  pipelineFamily,
  type ResolvedModel,
  resolveDiffusionModel,
  resolveTinyAutoencoder,
} from '@tiffin/diffusion';
import type { Command } from 'commander';
import { downloadProgressBar } from '../download-progress.js';

/** `demo` is Stable Diffusion too: the small model trained by the project, shipped in @tiffin/demo-model. */
const DEMO = 'demo';
const SDXL = 'stable-diffusion-xl';
const SUPPORTED_PIPELINES = ['stable-diffusion', SDXL, DEMO];

/** Which model `start`, `download` and `build` take (`--model-id`, `--revision`). */
export interface ModelFlags {
  /** Absent: the pipeline's default model (SD 2 for stable-diffusion, SDXL base for stable-diffusion-xl). */
  modelId?: string;
  revision: string;
}

/** The `<pipeline>` argument: stable-diffusion, stable-diffusion-xl or demo. */
export function checkPipelineName(name: string): void {
  if (!SUPPORTED_PIPELINES.includes(name)) {
    throw new CLIException(`Unknown diffusion pipeline '${name}': use ${SUPPORTED_PIPELINES.join(' or ')}`);
  }
}

/**
 * `demo`: the bundled demo model's folder. Otherwise a local folder as it is; a hub id from the model
 * store, downloaded into it (progress on stderr) when absent.
 */
export async function resolveModel(flags: ModelFlags, pipelineName: string): Promise<ResolvedModel> {
  if (pipelineName === DEMO) return { dir: demoModelDir(), downloaded: false };
  const bar = downloadProgressBar();
  try {
    const model = await resolveDiffusionModel({
      modelId: flags.modelId ?? (pipelineName === SDXL ? DEFAULT_SDXL_MODEL_ID : DEFAULT_MODEL_ID),
      revision: flags.revision,
      onProgress: bar.update,
    });
    bar.finish();
    if (model.downloaded) process.stderr.write(`Saved model ${model.tag} to the model store\n`);
    // stable-diffusion serves whatever the folder is; stable-diffusion-xl promises SDXL.
    if (pipelineName === SDXL && pipelineFamily(model.dir) !== 'sdxl')
      throw new CLIException(
        `${flags.modelId} is not an SDXL pipeline (its model_index.json has no text_encoder_2): serve it with stable-diffusion`,
      );
    return model;
  } catch (err) {
    bar.finish();
    throw err;
  }
}

/** The LoRA directory `start` serves: `--lora-dir`, else for `demo` the demo's own LoRA files. */
export function loraDirFor(pipelineName: string, loraDir: string | undefined): string | undefined {
  return loraDir ?? (pipelineName === DEMO ? demoLoraDir() : undefined);
}

/**
 * The ControlNets `start` loads: the `--controlnet` pairs, and for `demo` the demo's Canny ControlNet as `canny`
 * unless a `--controlnet canny=…` names another.
 */
export function controlNetsFor(
  pipelineName: string,
  pairs: ReadonlyArray<[string, string]> | undefined,
): Array<[string, string]> {
  const given = [...(pairs ?? [])];
  if (pipelineName !== DEMO || given.some(([name]) => name === 'canny')) return given;
  return [['canny', demoControlNetDir()], ...given];
}

/**
 * `--vae-tiny`: `demo` for the demo model's tiny decoder, a local AutoencoderTiny folder, or a hub id from the
 * model store (downloaded when absent).
 */
export async function resolveVaeTiny(id: string): Promise<ResolvedModel> {
  if (id === DEMO) return { dir: demoTinyDecoderDir(), downloaded: false };
  const bar = downloadProgressBar();
  try {
    const vae = await resolveTinyAutoencoder({ modelId: id, onProgress: bar.update });
    bar.finish();
    if (vae.downloaded) process.stderr.write(`Saved tiny autoencoder ${vae.tag} to the model store\n`);
    return vae;
  } catch (err) {
    bar.finish();
    throw err;
  }
}

export const VAE_TINY_HELP =
  'tiny autoencoder (TAESD, e.g. madebyollin/taesd; a folder, a hub id, downloaded once, or demo for the demo model\'s own): decodes images unless a request asks for decoder "full", and draws the previews';

/** `--model-id` and `--revision`, on every `tiffin diffusion` command. */
export const modelOptions = (command: Command): Command =>
  command
    .option(
      '--model-id <id>',
      `hub model id, a local diffusers folder or a single .safetensors checkpoint (default: ${DEFAULT_MODEL_ID}; ${DEFAULT_SDXL_MODEL_ID} for ${SDXL})`,
    )
    .option('--revision <rev>', 'hub branch, tag or commit', 'main');
