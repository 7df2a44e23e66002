import { resolve } from 'node:path';
import { humanSize, PackageStore } from '@tiffin/core';
import type { Command } from 'commander';
import { reportError } from '../errors.js';
import {
  formatCreationTime,
  type OutputFormat,
  parseOutputFormat,
  renderStructured,
  renderTable,
} from '../store-output.js';

/** `tiffin list|get|delete|export|import`: the local package store ($TIFFIN_HOME/packages). */
export function registerPackageCommands(program: Command): void {
  const store = () => new PackageStore();

  program
    .command('list')
    .description('List built packages (newest first within a name)')
    .argument('[name]', 'only packages with this name')
    .option('-o, --output <format>', 'table, json or yaml', parseOutputFormat, 'table')
    .action(async (name: string | undefined, flags: { output: OutputFormat }) => {
      try {
        const entries = await store().list(name);
        if (flags.output !== 'table') {
          process.stdout.write(
            renderStructured(
              entries.map((e) => ({
                tag: e.tag,
                service: e.manifest.service,
                size: e.manifest.size,
                models: e.manifest.models,
                creationTime: e.manifest.creationTime,
                labels: e.manifest.labels,
                path: e.path,
              })),
              flags.output,
            ),
          );
          return;
        }
        const rows = entries.map((e) => {
          const modelBytes = e.manifest.files
            .filter((f) => f.path.startsWith('models/'))
            .reduce((s, f) => s + f.size, 0);
          return [
            e.tag,
            humanSize(e.manifest.size),
            humanSize(modelBytes),
            formatCreationTime(e.manifest.creationTime),
          ];
        });
        process.stdout.write(renderTable(['Tag', 'Size', 'Model Size', 'Creation Time'], rows));
      } catch (err) {
        reportError(err);
      }
    });

  program
    .command('get')
    .description("Show a package's manifest")
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

  program
    .command('delete')
    .description('Delete a package from the store')
    .argument('<tag...>', 'one or more tags')
    .action(async (tags: string[]) => {
      try {
        for (const tag of tags) process.stdout.write(`Deleted package ${await store().delete(tag)}\n`);
      } catch (err) {
        reportError(err);
      }
    });

  program
    .command('export')
    .description('Write a package to a .tar.gz archive')
    .argument('<tag>', 'package tag')
    .argument('[path]', 'archive path (default ./<name>-<version>.tar.gz)')
    .action(async (tag: string, path: string | undefined) => {
      try {
        const entry = await store().get(tag);
        const target = resolve(path ?? `${entry.manifest.name}-${entry.manifest.version}.tar.gz`);
        await store().export(entry.tag, target);
        process.stdout.write(`Exported package ${entry.tag} to ${target}\n`);
      } catch (err) {
        reportError(err);
      }
    });

  program
    .command('import')
    .description('Add a package from an archive written by `tiffin export`')
    .argument('<path>', 'archive path')
    .action(async (path: string) => {
      try {
        const entry = await store().import(path);
        process.stdout.write(`Imported package ${entry.tag}\n`);
      } catch (err) {
        reportError(err);
      }
    });
}
