import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { JsonLineLogger, type Service } from '@tiffin/core';
import { type Command, InvalidArgumentError, Option } from 'commander';
import { parsePositiveInt } from '../../options.js';
import { loadOptions, type ModelFlags, serviceOptions } from '../model-flags.js';
import { frameworkModule } from '../model-target.js';
import { type RepositoryScan, scanRepository } from './entries.js';
import { type ModelControlMode, ModelRepository } from './repository.js';
import { areStoreTags, storeFolder, storeScan } from './store-entries.js';

/** The flags of `tiffin serve DIR` on a model repository (docs/model-repository.md). */
export interface RepositoryFlags {
  model?: string[];
  modelControl?: ModelControlMode;
  maxLoadedModels?: number;
  modelsMemory?: number;
}

function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

export function repositoryOptions(command: Command): Command {
  return command
    .option('--model <name>', 'repository: serve only this model of the folder (repeat for several)', collect)
    .addOption(
      new Option(
        '--model-control <mode>',
        'repository: explicit (load all at start; the repository API loads and unloads), poll (also reload changed files), none (no control API)',
      ).choices(['explicit', 'poll', 'none']),
    )
    .option(
      '--max-loaded-models <n>',
      'repository: most models resident at once (least recently used idle ones are evicted)',
      parsePositiveInt,
    )
    .option(
      '--models-memory <bytes>',
      'repository: most bytes of model files resident at once',
      (v: string) => {
        const n = Number(v);
        if (!Number.isSafeInteger(n) || n < 1)
          throw new InvalidArgumentError('expected a positive number of bytes');
        return n;
      },
    );
}

function repositoryFlagsGiven(flags: RepositoryFlags): boolean {
  return (
    flags.model !== undefined ||
    flags.modelControl !== undefined ||
    flags.maxLoadedModels !== undefined ||
    flags.modelsMemory !== undefined
  );
}

/**
 * Whether `tiffin serve <arg>` serves a model repository: a folder of models (or any folder with the
 * repository flags). A folder holding one `.onnx` file and nothing else stays the one model it always was.
 */
export async function isRepositoryTarget(arg: string, flags: RepositoryFlags): Promise<boolean> {
  const info = await stat(arg).catch(() => null);
  if (!info?.isDirectory()) return false;
  if (await stat(join(arg, 'model.json')).catch(() => null)) return false;
  const { entries, refused } = await scanRepository(arg);
  if (repositoryFlagsGiven(flags)) return true;
  if (entries.size + refused.size === 0) return false;
  const only = [...entries.values()];
  return !(only.length === 1 && refused.size === 0 && only[0]!.version === '' && only[0]!.module === 'onnx');
}

/**
 * Whether `tiffin serve <args>` serves store tags as a repository: several tags (`onnx:a onnx:b`), or one
 * with the repository flags (one tag alone stays the one model at `/predict` it always was).
 */
export function isStoreRepositoryTarget(specs: readonly string[], flags: RepositoryFlags): boolean {
  return areStoreTags(specs) && (specs.length > 1 || repositoryFlagsGiven(flags));
}

/** The service of store tags served as a repository (docs/model-repository.md, "From the model store"). */
export function storeRepositoryService(
  tags: readonly string[],
  flags: RepositoryFlags & ModelFlags,
): () => Promise<Service> {
  return repositoryService(storeFolder(), flags, storeScan(tags));
}

/** The service of a repository folder, made when the server starts (models loaded within the budget). */
export function repositoryService(
  dir: string,
  flags: RepositoryFlags & ModelFlags,
  scan?: () => Promise<RepositoryScan>,
): () => Promise<Service> {
  return async () => {
    const repo = await ModelRepository.open({
      dir,
      scan,
      only: flags.model,
      control: flags.modelControl ?? 'explicit',
      budget: { maxModels: flags.maxLoadedModels, maxBytes: flags.modelsMemory },
      defaults: serviceOptions(flags),
      logger: new JsonLineLogger(),
      open: async (entry) =>
        (await frameworkModule(entry.module)).loadModel(entry.source, {
          ...loadOptions(flags),
          // Other models keep answering while this one opens.
          inspectOffThread: true,
          ...(entry.config.instances ? { instances: entry.config.instances } : {}),
        }),
    });
    return repo.service;
  };
}
