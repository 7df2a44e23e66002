import { ModelStore } from '@tiffin/core';
import { humanSize } from '@tiffin/core/internal';
import type { Command } from 'commander';
import { formatCreationTime } from '../store-output.js';
import { registerStoreCommands } from './store-commands.js';

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
  });
}
