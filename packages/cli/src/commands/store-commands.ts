import { resolve } from 'node:path';
import { exportEntry, importEntry } from '@tiffin/build';
import type { BaseManifest, EntryStore, StoreEntry } from '@tiffin/core/internal';
import type { Command } from 'commander';
import { reportError } from '../errors.js';
import { parseNonNegativeInt } from '../options.js';
import { type OutputFormat, parseOutputFormat, renderStructured, renderTable } from '../store-output.js';

/** `--max-unpacked-size`: the bound on what an imported archive unpacks to, checked before extracting. */
export const MAX_UNPACKED_SIZE_OPTION = [
  '--max-unpacked-size <bytes>',
  "most bytes the archive may unpack to (default: 100 times the archive's size, at least 1 GiB)",
  parseNonNegativeInt,
] as const;

/** What differs between the model store's and the package store's list/get/delete/export/import commands. */
export interface StoreCommandsSpec<M extends BaseManifest> {
  /** Singular noun in help and messages: "model", "package". */
  readonly noun: string;
  /** Adjective for the list help: "saved" models, "built" packages. */
  readonly listedAs: string;
  /** The command line that writes the archives `import` reads, e.g. "tiffin models export". */
  readonly exportCommand: string;
  readonly store: () => EntryStore<M>;
  /** One entry as `list -o json|yaml` prints it. */
  readonly structured: (entry: StoreEntry<M>) => Record<string, unknown>;
  readonly tableHeaders: readonly string[];
  /** One entry as a `list` table row, in `tableHeaders` order. */
  readonly tableRow: (entry: StoreEntry<M>) => string[];
  /** Registers an `import` command of its own in place of the archive-only one. */
  readonly registerImport?: (parent: Command) => void;
}

/** Registers `list|get|delete|export|import` for one store under `parent` (the program or a command group). */
export function registerStoreCommands<M extends BaseManifest>(
  parent: Command,
  spec: StoreCommandsSpec<M>,
): void {
  const { noun, store } = spec;

  parent
    .command('list')
    .description(`List ${spec.listedAs} ${noun}s (newest first within a name)`)
    .argument('[name]', `only ${noun}s with this name`)
    .option('-o, --output <format>', 'table, json or yaml', parseOutputFormat, 'table')
    .action(async (name: string | undefined, flags: { output: OutputFormat }) => {
      try {
        const entries = await store().list(name);
        if (flags.output !== 'table') {
          process.stdout.write(renderStructured(entries.map(spec.structured), flags.output));
          return;
        }
        process.stdout.write(renderTable(spec.tableHeaders, entries.map(spec.tableRow)));
      } catch (err) {
        reportError(err);
      }
    });

  parent
    .command('get')
    .description(`Show a ${noun}'s manifest`)
    .argument('<tag>', 'name:version, or name[:latest] for the newest')
    .option('-o, --output <format>', 'yaml or json', parseOutputFormat, 'yaml')
    .action(async (tag: string, flags: { output: OutputFormat }) => {
      try {
        const entry = await store().get(tag);
        process.stdout.write(
          renderStructured(
            { ...entry.manifest, path: entry.path },
            flags.output === 'json' ? 'json' : 'yaml',
          ),
        );
      } catch (err) {
        reportError(err);
      }
    });

  parent
    .command('delete')
    .description(`Delete a ${noun} from the store`)
    .argument('<tag...>', 'one or more tags')
    .action(async (tags: string[]) => {
      try {
        for (const tag of tags) process.stdout.write(`Deleted ${noun} ${await store().delete(tag)}\n`);
      } catch (err) {
        reportError(err);
      }
    });

  parent
    .command('export')
    .description(`Write a ${noun} to a .tar.gz archive`)
    .argument('<tag>', `${noun} tag`)
    .argument('[path]', 'archive path (default ./<name>-<version>.tar.gz)')
    .action(async (tag: string, path: string | undefined) => {
      try {
        const entry = await store().get(tag);
        const target = resolve(path ?? `${entry.manifest.name}-${entry.manifest.version}.tar.gz`);
        await exportEntry(store(), entry.tag, target);
        process.stdout.write(`Exported ${noun} ${entry.tag} to ${target}\n`);
      } catch (err) {
        reportError(err);
      }
    });

  if (spec.registerImport) {
    spec.registerImport(parent);
    return;
  }
  parent
    .command('import')
    .description(`Add a ${noun} from an archive written by \`${spec.exportCommand}\``)
    .argument('<path>', 'archive path')
    .option(...MAX_UNPACKED_SIZE_OPTION)
    .action(async (path: string, flags: { maxUnpackedSize?: number }) => {
      try {
        const entry = await importEntry(store(), path, { maxUnpackedBytes: flags.maxUnpackedSize });
        process.stdout.write(`Imported ${noun} ${entry.tag}\n`);
      } catch (err) {
        reportError(err);
      }
    });
}
