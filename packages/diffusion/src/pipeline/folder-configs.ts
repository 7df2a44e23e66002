import { join } from 'node:path';
import type { ClipTextConfig } from '../architectures/clip-text.js';
import { type UNetConfig, validateUNetConfig } from '../architectures/unet-config.js';
import type { VaeConfig } from '../architectures/vae.js';
import type { SchedulerConfig } from '../schedulers/types.js';
import { ClipTokenizer } from '../tokenizer/clip-tokenizer.js';
import { type ModelIndex, readJson, readModelIndex } from '../weights/folder.js';

/** What a diffusers SD1/SD2 folder says about itself, before any weight is read (the same for every engine). */
export interface PipelineFolderConfigs {
  index: ModelIndex;
  teConfig: ClipTextConfig;
  unetConfig: UNetConfig;
  vaeConfig: VaeConfig;
  schedulerConfig: SchedulerConfig;
  tokenizer: ClipTokenizer;
}

/** Read and check the configs and tokenizer of a diffusers folder; errors name the file that is wrong. */
export function readPipelineFolderConfigs(dir: string): PipelineFolderConfigs {
  const index = readModelIndex(dir);
  const config = (file: string) => readJson(join(dir, file), file);
  const teConfig = config('text_encoder/config.json') as unknown as ClipTextConfig;
  const unetConfig = config('unet/config.json') as unknown as UNetConfig;
  validateUNetConfig(unetConfig);
  const vaeConfig = config('vae/config.json') as unknown as VaeConfig;
  const schedulerConfig = config('scheduler/scheduler_config.json') as SchedulerConfig;
  const tokenizer = ClipTokenizer.fromFolder(join(dir, 'tokenizer'));
  return { index, teConfig, unetConfig, vaeConfig, schedulerConfig, tokenizer };
}
