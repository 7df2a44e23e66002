import { importEntry } from '@tiffin/build';
import { ModelStore } from '@tiffin/core';
import { humanSize } from '@tiffin/core/internal';
import type { Command } from 'commander';
import { reportError } from '../errors.js';
import { frameworkModule, resolveModelTarget } from '../serve/model-target.js';
import { formatCreationTime } from '../store-output.js';
import { MAX_UNPACKED_SIZE_OPTION, registerStoreCommands } from './store-commands.js';

/** `tiffin models list|get|delete|export|import`: the local model store. */
export function registerModels(program: Command): void {
  const models = program.command('models').description('Manage the local model store ($TIFFIN_HOME/models)');
  registerStoreCommands(models, {
    noun: 'model',
    listedAs: 'saved',
    exportCommand: 'tiffin models export',
    store: () => new ModelStore(),
    structured: (e) => ({
      tag: e.tag,
      module: e.manifest.module,
      size: e.manifest.size,
      creationTime: e.manifest.creationTime,
      labels: e.manifest.labels,
      path: e.path,
    }),
    tableHeaders: ['Tag', 'Module', 'Size', 'Creation Time'],
    tableRow: (e) => [
      e.tag,
      e.manifest.module,
      humanSize(e.manifest.size),
      formatCreationTime(e.manifest.creationTime),
    ],
    registerImport: registerModelImport,
  });
}

/**
 * `tiffin models import <archive>` adds an exported model back; `tiffin models import <file|folder> --name N`
 * saves a model file (`.onnx`, a TF.js `model.json` folder) as its framework module's `saveModel` does.
 */
function registerModelImport(models: Command): void {
  models
    .command('import')
    .description(
      'Add a model: an archive written by `tiffin models export`, or with --name a model file or folder (model.onnx, a TF.js model.json folder)',
    )
    .argument('<path>', 'archive, model file or model folder')
    .option(
      '--name <name>',
      'save the model file or folder under this name (its signature is read from the model)',
    )
    .option('--module <module>', 'framework module when the file name does not tell (onnx, tfjs)')
    .option(...MAX_UNPACKED_SIZE_OPTION)
    .action(async (path: string, flags: { name?: string; module?: string; maxUnpackedSize?: number }) => {
      try {
        if (flags.name === undefined) {
          const entry = await importEntry(new ModelStore(), path, {
            maxUnpackedBytes: flags.maxUnpackedSize,
          });
          process.stdout.write(`Imported model ${entry.tag}\n`);
          return;
        }
        const framework = flags.module
          ? await frameworkModule(flags.module)
          : (await resolveModelTarget(path))?.framework;
        if (!framework)
          throw new Error(
            `${path} is not a model file Tiffin knows (.onnx, a TF.js model.json folder); name --module`,
          );
        const tag = await framework.saveModel(flags.name, path);
        process.stdout.write(`Saved model ${tag} (module ${framework.module})\n`);
      } catch (err) {
        reportError(err);
      }
    });
}
