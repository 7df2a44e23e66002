import { PackageStore } from '@tiffin/build';
import { humanSize } from '@tiffin/core/internal';
import type { Command } from 'commander';
import { formatCreationTime } from '../store-output.js';
import { registerStoreCommands } from './store-commands.js';

/** `tiffin list|get|delete|export|import`: the local package store ($TIFFIN_HOME/packages). */
export function registerPackageCommands(program: Command): void {
  registerStoreCommands(program, {
    noun: 'package',
    listedAs: 'built',
    exportCommand: 'tiffin export',
    store: () => new PackageStore(),
    structured: (e) => ({
      tag: e.tag,
      service: e.manifest.service,
      size: e.manifest.size,
      models: e.manifest.models,
      creationTime: e.manifest.creationTime,
      labels: e.manifest.labels,
      path: e.path,
    }),
    tableHeaders: ['Tag', 'Size', 'Model Size', 'Creation Time'],
    tableRow: (e) => {
      const modelBytes = e.manifest.files
        .filter((f) => f.path.startsWith('models/'))
        .reduce((s, f) => s + f.size, 0);
      return [
        e.tag,
        humanSize(e.manifest.size),
        humanSize(modelBytes),
        formatCreationTime(e.manifest.creationTime),
      ];
    },
  });
}
