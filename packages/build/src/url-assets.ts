import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { cp, mkdir, readFile } from 'node:fs/promises';
import { basename, dirname, extname, join, resolve, sep } from 'node:path';
import type { Loader, Plugin } from 'esbuild';

/**
 * Files a service reaches with `new URL('./relative/path', import.meta.url)` (a model file, a labels file, a
 * model folder): the pattern Node, Vite and webpack read as "this file travels with the code". A bundle moves
 * the code, so those URLs would point beside the package; this plugin rewrites each to `./assets/<name>` and
 * records the file, and `copyUrlAssets` puts it there. Only the user's own sources are read (not node_modules),
 * and only URLs that name an existing file or folder are rewritten.
 */
const ASSET_URL = /new\s+URL\(\s*(['"])(\.{1,2}\/[^'"\n]*)\1\s*,\s*import\.meta\.url\s*\)/g;

const LOADERS: Readonly<Record<string, Loader>> = {
  '.ts': 'ts',
  '.mts': 'ts',
  '.cts': 'ts',
  '.tsx': 'tsx',
  '.js': 'js',
  '.mjs': 'js',
  '.cjs': 'js',
  '.jsx': 'jsx',
};

/** Absolute source path → its name under the package's `assets/` folder. */
export type UrlAssets = Map<string, string>;

export function urlAssetsPlugin(assets: UrlAssets): Plugin {
  return {
    name: 'tiffin-url-assets',
    setup(build) {
      build.onLoad({ filter: /\.[cm]?[jt]sx?$/ }, async (args) => {
        if (args.path.includes(`${sep}node_modules${sep}`)) return undefined;
        const source = await readFile(args.path, 'utf8');
        if (!source.includes('import.meta.url')) return undefined;
        let changed = false;
        const contents = source.replace(ASSET_URL, (whole, _quote: string, relativeUrl: string) => {
          const target = resolve(dirname(args.path), decodeURIComponent(relativeUrl));
          if (!existsSync(target)) return whole;
          const name = assets.get(target) ?? assetName(target);
          assets.set(target, name);
          changed = true;
          return `new URL(${JSON.stringify(`./assets/${name}${relativeUrl.endsWith('/') ? '/' : ''}`)}, import.meta.url)`;
        });
        if (!changed) return undefined;
        return { contents, loader: LOADERS[extname(args.path)] ?? 'js', resolveDir: dirname(args.path) };
      });
    },
  };
}

/** A name that keeps the file's own (readable in the package) and cannot collide with another folder's. */
function assetName(path: string): string {
  const hash = createHash('sha256').update(path).digest('hex').slice(0, 8);
  return `${hash}-${basename(path)}`;
}

/** Copies every recorded asset into `<packageDir>/assets/`. */
export async function copyUrlAssets(assets: UrlAssets, packageDir: string): Promise<void> {
  if (assets.size === 0) return;
  await mkdir(join(packageDir, 'assets'), { recursive: true });
  for (const [source, name] of assets) {
    await cp(source, join(packageDir, 'assets', name), { recursive: true, dereference: true });
  }
}
