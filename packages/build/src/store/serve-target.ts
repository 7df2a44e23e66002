import { stat } from 'node:fs/promises';
import { register } from 'node:module';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { assertNoSymlinkEscape, containedPath, NotFound } from '@tiffin/core/internal';
import { PackageStore, type StoredPackage } from './package-store.js';

/** What `tiffin serve <tag>` runs: the package's bundled entry module plus the package itself. */
export interface ServeTarget {
  /** Absolute path of the module whose default export is the Service. */
  entry: string;
  package: StoredPackage;
}

/**
 * Resolve a package tag (`name`, `name:latest`, `name:version`) for serving. It also prepares the process
 * to run the package from any working folder:
 * - `TIFFIN_MODELS_DIR` points at the package's bundled models (unless already set);
 * - when the package's dependencies are not installed (no `node_modules`), bare imports the package
 *   cannot resolve fall back to this Tiffin installation's own copies, and `@tiffin/*` always resolve
 *   there first, so the served Service is an instance of the running server's `Service` class.
 */
export async function resolveServeTarget(tagText: string, store = new PackageStore()): Promise<ServeTarget> {
  const pkg = await store.get(tagText);
  // The manifest may come from an imported archive: its entry must be a file of the package.
  const entry = containedPath(pkg.path, pkg.manifest.entry, 'Package entry module');
  // An archive may carry a symbolic link: the entry must not lead out of the package through one.
  await assertNoSymlinkEscape(pkg.path, entry, 'Package entry module');
  if (!(await stat(entry).catch(() => null))?.isFile()) {
    throw new NotFound(`Package '${pkg.tag}' has no entry module ${entry}; build it again`);
  }
  if (pkg.manifest.models.length > 0 && !process.env.TIFFIN_MODELS_DIR) {
    process.env.TIFFIN_MODELS_DIR = join(pkg.path, 'models');
  }
  installResolutionFallback(pkg.path);
  return { entry, package: pkg };
}

/** True when `arg` (minus a `:export` suffix) names an existing file, i.e. it is not a store tag. */
export async function isServiceFileArgument(arg: string): Promise<boolean> {
  const match = /^(.*?)(?::([A-Za-z_$][\w$]*))?$/.exec(arg);
  const file = match?.[1] ?? arg;
  return (await stat(resolve(file)).catch(() => null))?.isFile() ?? false;
}

/**
 * What `tiffin serve <arg>` should load: `arg` itself when it names a service file (or looks like one,
 * so a typo still reads as "file not found"), else the entry module of the package tagged `arg`.
 */
export async function resolveServeArgument(arg: string, store?: PackageStore): Promise<string> {
  if (await isServiceFileArgument(arg)) return arg;
  if (arg.includes('/') || arg.includes('\\') || /\.[cm]?[jt]sx?(?::[A-Za-z_$][\w$]*)?$/.test(arg))
    return arg;
  return (await resolveServeTarget(arg, store)).entry;
}

const registered = new Set<string>();

function installResolutionFallback(packageDir: string): void {
  const packageUrl = pathToFileURL(`${resolve(packageDir)}/`).href;
  if (registered.has(packageUrl)) return;
  registered.add(packageUrl);
  const parents = [
    process.argv[1] ? pathToFileURL(resolve(process.argv[1])).href : null,
    import.meta.url,
    pathToFileURL(`${process.cwd()}/`).href,
  ].filter((p): p is string => p !== null);
  register(`data:text/javascript,${encodeURIComponent(RESOLVE_HOOK)}`, {
    data: { packageUrl, parents },
  });
}

// Runs on Node's loader thread: plain JavaScript, no imports.
const RESOLVE_HOOK = `
let packageUrl = '';
let parents = [];
export function initialize(data) { packageUrl = data.packageUrl; parents = data.parents; }
const bare = (s) => !s.startsWith('.') && !s.startsWith('/') && !/^[a-z][a-z0-9+.-]*:/i.test(s);
async function fromParents(specifier, context, next) {
  for (const parentURL of parents) {
    try { return await next(specifier, { ...context, parentURL }); } catch {}
  }
  return null;
}
export async function resolve(specifier, context, next) {
  const inPackage = typeof context.parentURL === 'string' && context.parentURL.startsWith(packageUrl);
  if (!inPackage || !bare(specifier)) return next(specifier, context);
  if (specifier.startsWith('@tiffin/')) {
    const shared = await fromParents(specifier, context, next);
    if (shared) return shared;
  }
  try {
    return await next(specifier, context);
  } catch (err) {
    const fallback = await fromParents(specifier, context, next);
    if (fallback) return fallback;
    throw err;
  }
}
`;
