import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { TarballSources } from './tarball-sources.js';
import type { ManifestFragment } from './templates.js';

const require = createRequire(import.meta.url);

/**
 * The version to depend on for a @tiffin/* package: the one installed beside this CLI (its own
 * dependencies), else this CLI's version (the packages are released together).
 */
function tiffinVersion(name: string, cliVersion: string): string {
  try {
    const manifest = JSON.parse(readFileSync(require.resolve(`${name}/package.json`), 'utf8')) as {
      version: string;
    };
    return manifest.version;
  } catch {
    return cliVersion;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Objects merge key by key (later fragments win); anything else is replaced. */
function merge(base: Record<string, unknown>, extra: Record<string, unknown>): Record<string, unknown> {
  const out = { ...base };
  for (const [key, value] of Object.entries(extra)) {
    const current = out[key];
    out[key] = isRecord(current) && isRecord(value) ? merge(current, value) : value;
  }
  return out;
}

/**
 * The project's package.json: its name, the fragments merged, `@tiffin/*: "*"` pinned to `^<version>`; with
 * `sources`, to those tarballs instead (`file:` paths), and an override sends every @tiffin package they depend on
 * to its tarball too, so the project installs while the packages are not on the npm registry.
 */
export function projectManifest(
  name: string,
  fragments: readonly ManifestFragment[],
  cliVersion: string,
  sources?: TarballSources,
): Record<string, unknown> {
  const manifest = fragments.reduce<Record<string, unknown>>((acc, fragment) => merge(acc, fragment), {
    name,
  });
  const spec = (dep: string) => {
    const tarball = sources?.tarballs.get(dep);
    return tarball ? `file:${tarball}` : `^${tiffinVersion(dep, cliVersion)}`;
  };
  for (const field of ['dependencies', 'devDependencies']) {
    const deps = manifest[field];
    if (!isRecord(deps)) continue;
    const pinned = Object.entries(deps).map(([dep, range]) => [
      dep,
      dep.startsWith('@tiffin/') && range === '*' ? spec(dep) : range,
    ]);
    manifest[field] = Object.fromEntries(pinned.sort(([a], [b]) => String(a).localeCompare(String(b))));
  }
  if (sources) {
    // npm wants an override of a direct dependency to be the same spec as the dependency: the same file: path.
    const tarballs = Object.fromEntries([...sources.tarballs].map(([dep, path]) => [dep, `file:${path}`]));
    const pnpm = isRecord(manifest.pnpm) ? manifest.pnpm : {};
    manifest.overrides = { ...(isRecord(manifest.overrides) ? manifest.overrides : {}), ...tarballs };
    manifest.pnpm = {
      ...pnpm,
      overrides: { ...(isRecord(pnpm.overrides) ? pnpm.overrides : {}), ...tarballs },
    };
  }
  return manifest;
}
