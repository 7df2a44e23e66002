import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

/**
 * The package layers: which workspace package may import which. A package may use only what is listed for it;
 * a package that is missing from this table fails the check, so a new package declares its place first.
 * Direction: core at the bottom, the optional extras (io-*) and model runtimes on it, the diffusion service on
 * those, the CLI on top. ARCHITECTURE.md draws the same picture.
 */
export const PACKAGE_LAYERS: Readonly<Record<string, readonly string[]>> = {
  '@tiffin/core': [],
  '@tiffin/client': ['@tiffin/core'],
  '@tiffin/io-json': ['@tiffin/core'],
  '@tiffin/io-pandas': ['@tiffin/core'],
  '@tiffin/io-image': ['@tiffin/core'],
  '@tiffin/diffusion': ['@tiffin/core', '@tiffin/io-image', '@tiffin/io-json'],
  '@tiffin/demo-model': ['@tiffin/diffusion'],
  '@tiffin/fuzz': ['@tiffin/core', '@tiffin/io-image', '@tiffin/io-pandas'],
  '@tiffin/cli': ['@tiffin/core', '@tiffin/diffusion', '@tiffin/demo-model'],
};

export interface LayerViolation {
  pkg: string;
  file: string;
  imports: string;
}

const SPECIFIER = `['"](@tiffin\\/[^/'"]+)(?:\\/[^'"]*)?['"]`;
/** Static imports and re-exports start a line; dynamic import() and require() may stand anywhere. */
const IMPORT = new RegExp(
  `^\\s*(?:import|export)\\b[^;'"]*?(?:from\\s*)?${SPECIFIER}|\\b(?:import|require)\\s*\\(\\s*${SPECIFIER}`,
  'gm',
);
const COMMENT = /\/\*[\s\S]*?\*\/|(^|[^:])\/\/.*$/gm;

/** The workspace packages that `source` imports or requires (a subpath counts as its package); comments ignored. */
export function tiffinImports(source: string): string[] {
  const code = source.replace(COMMENT, '$1');
  return [...code.matchAll(IMPORT)].map((m) => (m[1] ?? m[2]) as string);
}

/** Imports of `pkg` that its layer does not allow; an unknown package is itself a violation. */
export function layerViolations(
  pkg: string,
  files: ReadonlyArray<{ file: string; source: string }>,
  layers: Readonly<Record<string, readonly string[]>> = PACKAGE_LAYERS,
): LayerViolation[] {
  const allowed = layers[pkg];
  if (!allowed) return [{ pkg, file: 'package.json', imports: '(package has no layer in PACKAGE_LAYERS)' }];
  const out: LayerViolation[] = [];
  for (const { file, source } of files) {
    for (const target of tiffinImports(source)) {
      if (target !== pkg && !allowed.includes(target)) out.push({ pkg, file, imports: target });
    }
  }
  return out;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : sourceFiles(path);
    return /\.(c|m)?tsx?$/.test(entry.name) ? [path] : [];
  });
}

/** Every package under packages/ with its src files (and its package.json dependencies as one pseudo-file). */
export function workspaceSources(
  root: string,
): Array<{ pkg: string; files: Array<{ file: string; source: string }> }> {
  const dir = join(root, 'packages');
  return readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => {
      const pkgDir = join(dir, entry.name);
      const manifest = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8')) as {
        name: string;
        dependencies?: Record<string, string>;
        peerDependencies?: Record<string, string>;
        optionalDependencies?: Record<string, string>;
      };
      const declared = Object.keys({
        ...manifest.dependencies,
        ...manifest.peerDependencies,
        ...manifest.optionalDependencies,
      })
        .filter((name) => name.startsWith('@tiffin/'))
        .map((name) => `import '${name}';`)
        .join('\n');
      const files = sourceFiles(join(pkgDir, 'src')).map((file) => ({
        file: relative(root, file),
        source: readFileSync(file, 'utf8'),
      }));
      return {
        pkg: manifest.name,
        files: [{ file: relative(root, join(pkgDir, 'package.json')), source: declared }, ...files],
      };
    });
}
