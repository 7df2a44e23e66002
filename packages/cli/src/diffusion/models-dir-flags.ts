import { existsSync, statSync } from 'node:fs';
import { CLIException } from '@tiffin/core/internal';
import type { Command } from 'commander';
import { parsePositiveInt } from '../options.js';

/** `--models-dir` and `--max-loaded-models` of `tiffin diffusion start`. */
export interface ModelsDirFlags {
  modelsDir?: string;
  maxLoadedModels: number;
}

/** The flags of a checkpoint folder requests may choose from (A1111's `--ckpt-dir`) and how many stay loaded. */
export const modelsDirOptions = (command: Command): Command =>
  command
    .option(
      '--models-dir <dir>',
      'folder of checkpoints requests may choose (diffusers folders and single-file .safetensors), by name: OpenAI model, A1111 sd_model_checkpoint, the native model field; the start model is the default',
    )
    .option(
      '--max-loaded-models <n>',
      'checkpoints kept loaded at once, least recently used unloaded first',
      parsePositiveInt,
      1,
    );

/** The service options of those flags; a `--models-dir` that is no folder is a CLI error now. */
export function modelsDirSettings(flags: ModelsDirFlags): { modelsDir?: string; maxLoadedModels: number } {
  const { modelsDir, maxLoadedModels } = flags;
  if (modelsDir !== undefined && !(existsSync(modelsDir) && statSync(modelsDir).isDirectory()))
    throw new CLIException(`--models-dir ${modelsDir} is not a folder`);
  return { ...(modelsDir === undefined ? {} : { modelsDir }), maxLoadedModels };
}
