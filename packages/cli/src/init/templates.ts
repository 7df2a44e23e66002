import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/** What a template adds to common/package.json (see templates/README.md). */
export interface ManifestFragment {
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  scripts?: Record<string, string>;
  [field: string]: unknown;
}

export interface Template {
  name: string;
  description: string;
  /** The manifest fragment: common/package.json, then the template's template.json on top. */
  manifest: ManifestFragment[];
  /** Project-relative path → file to copy; common/ first, the template's own files replace them. */
  files: Map<string, string>;
}

const COMMON = 'common';

/** The CLI package's folder (it ships `templates/`): the nearest one above this module, in src/ or dist/ alike. */
export function cliPackageDir(): string {
  for (let dir = dirname(fileURLToPath(import.meta.url)); ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'templates'))) return dir;
    if (dirname(dir) === dir) throw new Error(`No templates/ folder above ${fileURLToPath(import.meta.url)}`);
  }
}

function templatesDir(): string {
  return join(cliPackageDir(), 'templates');
}

/** The templates' names: every folder under templates/ but common/. */
export function templateNames(): string[] {
  return readdirSync(templatesDir(), { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && entry.name !== COMMON)
    .map((entry) => entry.name)
    .sort();
}

function filesUnder(root: string, into: Map<string, string>): void {
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else into.set(relative(root, path), path);
    }
  };
  walk(root);
}

export function readTemplate(name: string): Template {
  const dir = join(templatesDir(), name);
  if (name === COMMON || !existsSync(join(dir, 'template.json')) || !statSync(dir).isDirectory())
    throw new Error(`Unknown template '${name}' (templates: ${templateNames().join(', ')})`);
  const { description, ...fragment } = JSON.parse(readFileSync(join(dir, 'template.json'), 'utf8')) as {
    description: string;
  } & ManifestFragment;
  const common = join(templatesDir(), COMMON);
  const files = new Map<string, string>();
  filesUnder(common, files);
  files.delete('package.json');
  filesUnder(dir, files);
  files.delete('template.json');
  return {
    name,
    description,
    manifest: [JSON.parse(readFileSync(join(common, 'package.json'), 'utf8')) as ManifestFragment, fragment],
    files,
  };
}
