import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { CLIException } from '@tiffin/core/internal';
import { projectManifest } from './project-manifest.js';
import type { TarballSources } from './tarball-sources.js';
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

/** What the project's README says when its @tiffin packages are tarballs (see `projectManifest`). */
function tarballNote(sources: TarballSources): string {
  return `
## Where the @tiffin packages come from

The @tiffin packages are not on the npm registry yet, so \`tiffin init\` pointed this project's package.json at
the tarballs it was installed from, in ${sources.from}: the \`file:\` dependencies, and the \`overrides\` (npm) and
\`pnpm.overrides\` that send the @tiffin packages they depend on there too. \`npm install\` works as it stands while
that folder is there. Once the packages are published, set each \`file:\` dependency to \`^<version>\` and drop the
@tiffin entries of the overrides.
`;
}

/**
 * Writes the template into `dir` (made if missing; refused when it has files); the paths written. With `sources`,
 * the @tiffin packages are those tarballs (package.json and a README section say so).
 */
export function writeProject(
  dir: string,
  template: Template,
  cliVersion: string,
  sources?: TarballSources,
): string[] {
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
  write(
    'package.json',
    `${JSON.stringify(projectManifest(name, template.manifest, cliVersion, sources), null, 2)}\n`,
  );
  for (const [path, source] of template.files) {
    const target = RENAMED[basename(path)] ? join(dirname(path), RENAMED[basename(path)]!) : path;
    const text = TEXT.test(path) ? readFileSync(source, 'utf8').replaceAll('{{name}}', name) : undefined;
    const note = sources && target === 'README.md' ? tarballNote(sources) : '';
    write(target, text === undefined ? readFileSync(source) : text + note);
  }
  return written.sort();
}
