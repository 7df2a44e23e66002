import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';

/**
 * Where a new project's @tiffin/* packages come from when they are not on the npm registry: the tarballs this
 * CLI was installed from, or those a checkout packed. `from` says which, for the project's README.
 */
export interface TarballSources {
  /** Package name → absolute path of its `.tgz`. */
  tarballs: ReadonlyMap<string, string>;
  /** The folder the tarballs are in. */
  from: string;
}

const SCOPE = '@tiffin/';

/**
 * The @tiffin tarballs npm recorded for an install: `<project>/node_modules/.package-lock.json` (npm's hidden
 * lockfile) or the project's package-lock.json lists `resolved: "file:<path relative to the project>"` for them.
 */
function installedTarballs(nodeModules: string): Map<string, string> {
  const project = dirname(nodeModules);
  const out = new Map<string, string>();
  for (const lockfile of [join(nodeModules, '.package-lock.json'), join(project, 'package-lock.json')]) {
    if (!existsSync(lockfile)) continue;
    let lock: { packages?: Record<string, { resolved?: unknown }> };
    try {
      lock = JSON.parse(readFileSync(lockfile, 'utf8')) as typeof lock;
    } catch {
      continue;
    }
    for (const [path, entry] of Object.entries(lock.packages ?? {})) {
      const name = path.startsWith('node_modules/') ? path.slice('node_modules/'.length) : '';
      const resolved = entry.resolved;
      if (!name.startsWith(SCOPE) || name.includes('/node_modules/') || typeof resolved !== 'string')
        continue;
      if (!resolved.startsWith('file:') || !resolved.endsWith('.tgz')) continue;
      const tarball = resolve(project, resolved.slice('file:'.length));
      if (existsSync(tarball)) out.set(name, tarball);
    }
    if (out.size > 0) return out;
  }
  return out;
}

/** A checkout's `packs/` (what its `tarballs` script writes): `tiffin-<name>-<version>.tgz` per package. */
function packedTarballs(checkout: string, version: string): Map<string, string> {
  const packs = join(checkout, 'packs');
  const out = new Map<string, string>();
  if (!existsSync(packs)) return out;
  const suffix = `-${version}.tgz`;
  for (const file of readdirSync(packs)) {
    if (file.startsWith('tiffin-') && file.endsWith(suffix))
      out.set(`${SCOPE}${file.slice('tiffin-'.length, -suffix.length)}`, join(packs, file));
  }
  return out;
}

/**
 * The tarballs to depend on, from where this CLI runs (`cliDir`, its package folder): installed by npm from
 * tarballs, those tarballs; run from a checkout, the checkout's packed ones (none packed: `checkout` says where
 * to pack them). Installed from the registry: none, and the project takes the registry's versions.
 */
export function tarballSources(
  cliDir: string,
  version: string,
): { sources: TarballSources | undefined; checkout: string | undefined } {
  const parent = dirname(cliDir);
  if (basename(parent) === '@tiffin' && basename(dirname(parent)) === 'node_modules') {
    const tarballs = installedTarballs(dirname(parent));
    const first = tarballs.values().next().value;
    return { sources: first ? { tarballs, from: dirname(first) } : undefined, checkout: undefined };
  }
  // A checkout: packages/cli under a pnpm workspace.
  const checkout = dirname(dirname(cliDir));
  if (!existsSync(join(checkout, 'pnpm-workspace.yaml'))) return { sources: undefined, checkout: undefined };
  const tarballs = packedTarballs(checkout, version);
  return {
    sources: tarballs.size > 0 ? { tarballs, from: join(checkout, 'packs') } : undefined,
    checkout,
  };
}
