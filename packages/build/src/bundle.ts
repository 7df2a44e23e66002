import { builtinModules } from 'node:module';
import { dirname } from 'node:path';
import { build } from 'esbuild';
import { copyUrlAssets, type UrlAssets, urlAssetsPlugin } from './url-assets.js';

export interface BundleResult {
  /** Bare specifiers the bundle still imports (npm packages, kept external), builtins excluded. */
  externalPackages: string[];
  /** Files and folders the code reaches by `new URL('./…', import.meta.url)`, copied under `assets/`. */
  assets: string[];
}

const BUILTINS = new Set(builtinModules);

/**
 * Bundle the service file and its relative imports into one ES module whose default export is the
 * chosen Service. Every bare import (@tiffin/* and other npm packages) stays external: those are
 * installed from package.json, so the bundle holds only the user's own code. Files the code reaches with
 * `new URL('./…', import.meta.url)` travel with it (see url-assets.ts).
 */
export async function bundleService(options: {
  file: string;
  exportName: string;
  outfile: string;
  /** Code placed before everything else in the bundle. */
  banner?: string;
}): Promise<BundleResult> {
  const reexport =
    options.exportName === 'default'
      ? `export { default } from ${JSON.stringify(options.file)};`
      : `export { ${options.exportName} as default } from ${JSON.stringify(options.file)};`;
  const assets: UrlAssets = new Map();
  const result = await build({
    stdin: {
      contents: reexport,
      resolveDir: dirname(options.file),
      sourcefile: 'tiffin-entry.js',
      loader: 'js',
    },
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    outfile: options.outfile,
    metafile: true,
    logLevel: 'silent',
    legalComments: 'inline',
    banner: options.banner ? { js: options.banner } : undefined,
    plugins: [urlAssetsPlugin(assets)],
  });
  await copyUrlAssets(assets, dirname(options.outfile));
  const specifiers = new Set<string>();
  for (const output of Object.values(result.metafile.outputs)) {
    for (const imported of output.imports) {
      if (imported.external && !isBuiltin(imported.path)) specifiers.add(packageNameOf(imported.path));
    }
  }
  return { externalPackages: [...specifiers].sort(), assets: [...assets.keys()].sort() };
}

function isBuiltin(specifier: string): boolean {
  return (
    specifier.startsWith('node:') || BUILTINS.has(specifier) || BUILTINS.has(specifier.split('/')[0] ?? '')
  );
}

/** `@scope/name/sub/path` → `@scope/name`; `name/sub` → `name`. */
export function packageNameOf(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] ?? specifier);
}
