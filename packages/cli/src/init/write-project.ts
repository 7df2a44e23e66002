import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { CLIException } from '@tiffin/core/internal';
import { projectManifest } from './project-manifest.js';
import type { Template } from './templates.js';

/** npm never packs a file named .gitignore, so templates ship it as `gitignore`. */
const RENAMED: Readonly<Record<string, string>> = { gitignore: '.gitignore' };

/** Files whose `{{name}}` is filled in; anything else (an example image) is copied byte for byte. */
const TEXT = /(\.(ts|js|json|md|txt|yaml|yml)|gitignore)$/;

/** A package name npm accepts, from the folder's name. */
export function projectName(dir: string): string {
  const name = basename(dir)
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/^[._-]+/, '');
  return name || 'tiffin-service';
}

/** Writes the template into `dir` (made if missing; refused when it has files); the paths written. */
export function writeProject(dir: string, template: Template, cliVersion: string): string[] {
  if (existsSync(dir) && readdirSync(dir).length > 0)
    throw new CLIException(`${dir} is not empty: give a new folder, e.g. tiffin init my-service`);
  const name = projectName(dir);
  const written: string[] = [];
  const write = (path: string, content: string | Buffer) => {
    const target = join(dir, path);
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, content);
    written.push(path);
  };
  write('package.json', `${JSON.stringify(projectManifest(name, template.manifest, cliVersion), null, 2)}\n`);
  for (const [path, source] of template.files) {
    const target = RENAMED[basename(path)] ? join(dirname(path), RENAMED[basename(path)]!) : path;
    write(
      target,
      TEXT.test(path) ? readFileSync(source, 'utf8').replaceAll('{{name}}', name) : readFileSync(source),
    );
  }
  return written.sort();
}
