import { resolve } from 'node:path';
import { humanSize, ModelStore } from '@tiffin/core';
import type { Command } from 'commander';
import { reportError } from '../errors.js';
import {
  formatCreationTime,
  type OutputFormat,
  parseOutputFormat,
  renderStructured,
  renderTable,
} from '../store-output.js';

/** `tiffin models list|get|delete|export|import`: the local model store. */
export function registerModels(program: Command): void {
  const models = program.command('models').description('Manage the local model store ($TIFFIN_HOME/models)');
  const store = () => new ModelStore();

  models
    .command('list')
    .description('List saved models (newest first within a name)')
    .argument('[name]', 'only models with this name')
    .option('-o, --output <format>', 'table, json or yaml', parseOutputFormat, 'table')
    .action(async (name: string | undefined, flags: { output: OutputFormat }) => {
      try {
        const entries = await store().list(name);
        if (flags.output !== 'table') {
          process.stdout.write(
            renderStructured(
              entries.map((e) => ({
                tag: e.tag,
                module: e.manifest.module,
                size: e.manifest.size,
                creationTime: e.manifest.creationTime,
                labels: e.manifest.labels,
                path: e.path,
              })),
              flags.output,
            ),
          );
          return;
        }
        const rows = entries.map((e) => [
          e.tag,
          e.manifest.module,
          humanSize(e.manifest.size),
          formatCreationTime(e.manifest.creationTime),
        ]);
        process.stdout.write(renderTable(['Tag', 'Module', 'Size', 'Creation Time'], rows));
      } catch (err) {
        reportError(err);
      }
    });

  models
    .command('get')
    .description("Show a model's manifest")
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

  models
    .command('delete')
    .description('Delete a model from the store')
    .argument('<tag...>', 'one or more tags')
    .action(async (tags: string[]) => {
      try {
        for (const tag of tags) process.stdout.write(`Deleted model ${await store().delete(tag)}\n`);
      } catch (err) {
        reportError(err);
      }
    });

  models
    .command('export')
    .description('Write a model to a .tar.gz archive')
    .argument('<tag>', 'model tag')
    .argument('[path]', 'archive path (default ./<name>-<version>.tar.gz)')
    .action(async (tag: string, path: string | undefined) => {
      try {
        const entry = await store().get(tag);
        const target = resolve(path ?? `${entry.manifest.name}-${entry.manifest.version}.tar.gz`);
        await store().export(entry.tag, target);
        process.stdout.write(`Exported model ${entry.tag} to ${target}\n`);
      } catch (err) {
        reportError(err);
      }
    });

  models
    .command('import')
    .description('Add a model from an archive written by `tiffin models export`')
    .argument('<path>', 'archive path')
    .action(async (path: string) => {
      try {
        const entry = await store().import(path);
        process.stdout.write(`Imported model ${entry.tag}\n`);
      } catch (err) {
        reportError(err);
      }
    });
}
